import { sendParent, sendTo, setup, spawnChild } from 'xstate';
import { createAgentWorker, type AgentWorks, type WorkerRequest } from '../actors/agentWorker.js';
import type { CallModelInput, ModelTurn } from '../actors/callModel.js';
import { missingEnvironment } from '../actors/agentEnvironment.js';
import { realClock } from '../clock.js';
import { BudgetSpentError } from '../errors.js';
import type { TroupeEvent } from '../events/events.js';
import type { Message } from '../messaging/Message.js';
import { clockedAgentActions } from './agentClock.js';
import { agentChanges, assigned, type ChangeMaker } from './agentChanges.js';
import { isUnpricedMessage, limitHit, overBudgetMessage, unpricedMessage } from './agentBudget.js';
import { overBudget, pendingToolCalls, requiredAfter } from './agentContext.js';
import type { AgentContext, AgentEvent, AgentInput, AgentOutcome } from './agentTypes.js';

/** The batch's end, as the params of the actions that record it. */
const batchEnd = ({ event }: { event: Extract<AgentEvent, { type: 'TOOLS.DONE' }> }) => event;

/** What every end of a tool batch does first: append its tool messages and count its calls. */
export const endOfBatch = [{ type: 'appendToolMessages' as const, params: batchEnd }];

/** The same for a batch after which the agent, holding its slot, thinks again: the next turn begun in the same assign. */
export const endOfBatchThenThink = [{ type: 'endBatchAndBeginTurn' as const, params: batchEnd }];

/** A batch that called `finish` before the required tools: recorded, and the agent told which are missing. */
export const remindAfterFinish = [{ type: 'remindAfterFinish' as const, params: batchEnd }];

/** The same for a batch after which the agent parks in `running.waiting`: it gives up its slot in the same assign. */
export const parkAfterBatch = [{ type: 'parkAfterBatch' as const, params: batchEnd }];

/**
 * A waiting agent that may wake (its waits ended, or mail came): it asks for a slot, unless it has no turn left, when
 * it ends with its last answer (or fails with `max_turns` without one).
 */
export const wake = [
  { guard: 'outOfTurnsWithMailAndAnswer' as const, target: '#agent.completed' as const, actions: 'settle' as const },
  { guard: 'outOfTurnsWithMail' as const, target: '#agent.failed' as const, actions: 'failOutOfTurns' as const },
  // The supervisor had a slot free and gave it with the message: think at once (the turn begins holding it).
  { guard: 'slotGivenWithMail' as const, target: 'thinking' as const, actions: 'beginTurn' as const },
  { guard: 'mailReady' as const, target: 'waitingForSlot' as const, actions: 'requestSlot' as const },
  // A slot given for mail this agent does not wake for goes back.
  { guard: 'slotGiven' as const, actions: 'releaseSlot' as const },
];
/**
 * The guards that ask whether an agent's mail is ready (all its waits ended, or mail came while it waited for none),
 * made for `ready`, which the runtime gives (its post office); on its own an agent has none. Each is one function
 * rather than an `and()` of named guards: they are checked at every wake and every batch's end, and `and()` costs
 * allocations each time. Cheap checks come first: `ready` asks the post office.
 */
export function mailGuards(ready: (agentId: string) => boolean) {
  const mail = (context: AgentContext) => ready(context.input.id);
  const outOfTurns = (context: AgentContext) => context.turns >= context.input.maxTurns;
  const slotGiven = (event: AgentEvent) => (event.type === 'MESSAGE' || event.type === 'WAKE') && event.slot === true;
  return {
    mailReady: ({ context }: { context: AgentContext }) => mail(context),
    /** Out of turns as mail comes, with an answer to end with. */
    outOfTurnsWithMailAndAnswer: ({ context }: { context: AgentContext }) => outOfTurns(context) && mail(context) && hasAnswer(context),
    outOfTurnsWithMail: ({ context }: { context: AgentContext }) => outOfTurns(context) && mail(context),
    /** Woken with a slot the supervisor gave with the message, and mail to read. */
    slotGivenWithMail: ({ context, event }: { context: AgentContext; event: AgentEvent }) => slotGiven(event) && mail(context),
    /** A batch that waits for messages while none is ready: the agent parks. */
    waitsWithoutMail: ({ context, event }: { context: AgentContext; event: AgentEvent }) =>
      event.type === 'TOOLS.DONE' && event.waiting === true && !mail(context),
    /** A resident whose mail came while it thought. */
    residentWithMail: ({ context }: { context: AgentContext }) => context.input.resident === true && mail(context),
  };
}

/**
 * The guards that ask whether an agent holds a slot, made for `holds`. On its own an agent knows from its context
 * (`holdsSlot`, kept by `YIELD`, `RESUME` and its turns); without an inspector the runtime tells most agents of a lent
 * or returned slot without an event (`quietSlotNotices`) and gives `holds` from the supervisor's table instead.
 */
export function slotGuards(holds: (context: AgentContext) => boolean) {
  return {
    holdsSlot: ({ context }: { context: AgentContext }) => holds(context),
    /** `finish` too early (see the function of that name), holding a slot. */
    finishesTooEarlyWithSlot: ({ context, event }: { context: AgentContext; event: AgentEvent }) => finishesTooEarly(context, event) && holds(context),
    /** The last person the agent waited for answered, and it holds a slot. */
    lastPersonAnsweredWithSlot: ({ context }: { context: AgentContext }) => context.waitingForPeople <= 1 && holds(context),
  };
}

/**
 * The two common ends of a tool batch as one guard each, which every batch's end is checked against first: a batch
 * without `finish`, with turns left, that waits for messages none of which is ready (the agent parks), or that does
 * not wait so and holds a slot (it thinks again). They decide what the chain of guards after them would (`finish` and
 * the last turn first, then `waitsWithoutMail`, then `holdsSlot`), in one or two guards instead of eight or nine: a
 * resident trader ends every turn so. Made for `ready` and `holds`, as `mailGuards` and `slotGuards` are.
 */
export function batchEndGuards(ready: (agentId: string) => boolean, holds: (context: AgentContext) => boolean) {
  const plain = (context: AgentContext, event: AgentEvent): event is Extract<AgentEvent, { type: 'TOOLS.DONE' }> =>
    event.type === 'TOOLS.DONE' && event.finish === undefined && context.turns < context.input.maxTurns;
  return {
    parksAfterBatch: ({ context, event }: { context: AgentContext; event: AgentEvent }) =>
      plain(context, event) && event.waiting === true && !ready(context.input.id),
    thinksAfterBatch: ({ context, event }: { context: AgentContext; event: AgentEvent }) =>
      plain(context, event) && !(event.waiting === true && !ready(context.input.id)) && holds(context),
  };
}

function hasAnswer(context: AgentContext): boolean {
  return context.output !== null && context.output.trim() !== '';
}

/** A batch that calls `finish` while required tools are still not called, this batch's calls counted. */
function finishesTooEarly(context: AgentContext, event: AgentEvent): boolean {
  return event.type === 'TOOLS.DONE' && event.finish !== undefined && context.required.length > 0 && requiredAfter(context, event).length > 0;
}

/**
 * Why this turn takes the agent past a budget, in words, or undefined: its own budget checked against its own figures,
 * then what the runtime's `crosses` says of the budgets of its subtree and of every agent above it.
 */
function budgetCheck(crosses?: (agentId: string, turn: ModelTurn) => string | undefined) {
  return (context: AgentContext, turn: ModelTurn): string | undefined => ownPast(context, turn) ?? crosses?.(context.input.id, turn);
}

/**
 * The guards that end an agent at its budget. On its own an agent checks its own figures against its budget; the
 * runtime gives `crosses`, which also checks the budgets of the agent's subtree and of every agent above it, and says
 * which it crossed.
 */
export function budgetGuards(crosses?: (agentId: string, turn: ModelTurn) => string | undefined) {
  const over = budgetCheck(crosses);
  return {
    /** A reply with tool calls within every budget: what the chain of budget guards would send to `acting`, in one. */
    toolTurnWithinBudget: ({ context }: { context: AgentContext }, turn: ModelTurn) => turn.toolCalls.length > 0 && over(context, turn) === undefined,
    // A final answer is kept even when it crossed the budget; a resident would wait for more, so it ends.
    overBudget: ({ context }: { context: AgentContext }, turn: ModelTurn) =>
      (turn.toolCalls.length > 0 || context.input.resident === true) && over(context, turn) !== undefined,
    /**
     * A resident past its budget ends with its answer (this turn's, or its last) when it has one. A model with no price
     * under a `maxCostUsd` budget is no budget reached: the resident fails (`overBudget`) with the message that names
     * the price to add, rather than end quietly after its first answer.
     */
    residentOverBudget: ({ context }: { context: AgentContext }, turn: ModelTurn) => {
      if (context.input.resident !== true) return false;
      const answer = turn.toolCalls.length === 0 && turn.content.trim() !== '' ? turn.content : (context.output ?? '');
      if (answer.trim() === '') return false;
      const reason = over(context, turn);
      return reason !== undefined && !(turn.unpricedModel !== undefined && isUnpricedMessage(reason));
    },
  };
}

/**
 * The action that fails an agent whose turn crossed a budget, with the budget and limit named. It runs before the turn
 * is recorded, so it sees what the guard saw.
 */
export function budgetActions(crosses?: (agentId: string, turn: ModelTurn) => string | undefined, make: ChangeMaker = assigned) {
  const over = budgetCheck(crosses);
  return {
    failOverBudget: make((context, turn: ModelTurn) => ({ failure: overBudget(over(context, turn) ?? 'The agent went over its budget.') })),
  };
}

/** Why this turn takes the agent's own figures past its own budget, or undefined. */
function ownPast(context: AgentContext, turn: ModelTurn): string | undefined {
  const { budget } = context.input;
  if (!budget) return undefined;
  const unpriced = unpricedMessage(budget, turn);
  if (unpriced !== undefined) return unpriced;
  const { own } = context;
  const hit = limitHit(budget, {
    turns: own.modelCalls + 1,
    tokens: own.inputTokens + own.outputTokens + turn.inputTokens + turn.outputTokens,
    costUsd: own.costUsd + turn.costUsd,
  });
  return hit && overBudgetMessage(hit);
}

/**
 * This turn's model call, as the agent asks its worker for it; its `MODEL.DONE` or `MODEL.FAILED` ends `thinking`.
 */
function modelCall(context: AgentContext): WorkerRequest {
  const { input } = context;
  const call: CallModelInput = {
    agentId: input.id,
    agentName: input.name,
    depth: input.depth,
    messages: context.messages,
    header: { runId: input.runId, id: input.id, parentId: input.parentId, toolCallId: input.toolCallId },
  };
  if (input.retry !== undefined) call.retry = input.retry;
  return { type: 'MODEL.CALL', input: call };
}

/** This turn's tool calls, as the agent asks its worker to run them; `TOOLS.DONE` or `TOOLS.FAILED` ends `acting`. */
function toolsRun(context: AgentContext): WorkerRequest {
  const { input } = context;
  return {
    type: 'TOOLS.RUN',
    input: {
      agentId: input.id,
      agentName: input.name,
      depth: input.depth,
      messages: context.messages,
      toolCalls: pendingToolCalls(context.messages),
      header: { runId: input.runId, id: input.id, parentId: input.parentId, toolCallId: input.toolCallId },
    },
  };
}

/**
 * The actions that give agents' work to `works` instead of a worker actor each (what the runtime provides when no
 * inspector watches): no actor is started, each request is a call, the replies come as the agent's own events, and
 * leaving `running` stops what still runs, as stopping the worker actor would.
 */
export function workActions(works: AgentWorks) {
  type Args = { context: AgentContext; self: { send(event: AgentEvent): void } };
  return {
    startWorker: () => {},
    startModelCall: ({ context, self }: Args) => works.handle(context.input.id, self, modelCall(context)),
    startTools: ({ context, self }: Args) => works.handle(context.input.id, self, toolsRun(context)),
    stopWork: ({ context }: Args) => works.stop(context.input.id),
  };
}

/**
 * The agent machine's setup: its types, the actor the runtime provides (`worker`: model calls and tool batches), and every guard and
 * action by name. The states are built on it in `agentMachine.ts`, `agentThinking.ts` and `agentActing.ts`.
 */
export const agentSetup = setup({
  types: {
    context: {} as AgentContext,
    input: {} as AgentInput,
    events: {} as AgentEvent,
    emitted: {} as TroupeEvent,
    output: {} as AgentOutcome,
  },
  actors: {
    worker: createAgentWorker(missingEnvironment),
  },
  guards: {
    wantsTools: (_, turn: ModelTurn) => turn.toolCalls.length > 0,
    /** A final answer with text, of an agent that is not resident and has called every required tool. */
    plainAnswer: ({ context }, turn: ModelTurn) =>
      turn.toolCalls.length === 0 && context.input.resident !== true && context.required.length === 0 && turn.content.trim() !== '',
    emptyAnswer: (_, turn: ModelTurn) => turn.toolCalls.length === 0 && turn.content.trim() === '',
    ...budgetGuards(),
    turnsUsed: ({ context }) => context.turns >= context.input.maxTurns,
    /** A reply without tool calls leaves the agent an answer: its own text, or the agent's last answer. */
    answers: ({ context, event }) => {
      const turn = (event as { output?: ModelTurn }).output;
      const own = turn !== undefined && turn.toolCalls.length === 0 && turn.content.trim() !== '';
      return own || (context.output ?? '').trim() !== '';
    },
    resident: ({ context }) => context.input.resident === true,
    /** The turn's model call was refused because a budget over the agent is spent. */
    budgetSpent: ({ event }) => 'error' in event && event.error instanceof BudgetSpentError,
    hasAnswer: ({ context }) => hasAnswer(context),
    finishes: ({ event }) => event.type === 'TOOLS.DONE' && event.finish !== undefined,
    waitsForMail: ({ event }) => event.type === 'TOOLS.DONE' && event.waiting === true,
    /** A final answer (the model's reply without tool calls) while required tools are still not called. */
    answersTooEarly: ({ context, event }) => context.required.length > 0 && event.type === 'MODEL.DONE' && event.output.toolCalls.length === 0,
    /** `finish` too early (see the function of that name), on the last turn, or holding a slot. */
    finishesTooEarly: ({ context, event }) => finishesTooEarly(context, event),
    finishesTooEarlyOnLastTurn: ({ context, event }) => finishesTooEarly(context, event) && context.turns >= context.input.maxTurns,
    // Named guards rather than and([...]) where every batch's end is checked: and() costs allocations each time.
    /** The batch called `finish`, and there is an answer (its own, or the agent's last). */
    finishesWithAnswer: ({ context, event }) =>
      event.type === 'TOOLS.DONE' && event.finish !== undefined && (event.finish.answer ?? context.output ?? '').trim() !== '',
    /** A resident out of turns that has an answer to end with. */
    residentOutOfTurnsWithAnswer: ({ context }) =>
      context.input.resident === true && context.turns >= context.input.maxTurns && context.output !== null && context.output.trim() !== '',
    // Provided by the runtime for its post office (see mailGuards); on its own an agent's mail is never ready.
    ...mailGuards(() => false),
    ...slotGuards((context) => context.holdsSlot),
    ...batchEndGuards(() => false, (context) => context.holdsSlot),
    slotGiven: ({ event }) => (event.type === 'MESSAGE' || event.type === 'WAKE') && event.slot === true,
    lastPersonAnswered: ({ context }) => context.waitingForPeople <= 1,
  },
  actions: {
    // Made for the real clock; the runtime provides them made for its own (see clockedAgentActions).
    ...clockedAgentActions(realClock),
    // The agent's worker, started on entering `running`, makes each turn's model call and runs its tool batch, asked with
    // an event each; leaving `running` stops it, which aborts what it still runs. Only a final state leaves `thinking` or
    // `acting` before their work has answered, so nothing else needs stopping. (Started with its first call as input, it
    // saved an event for an agent of one turn, but every turn then paid for an `enqueueActions`.)
    // Unwatched, the runtime provides the four from `workActions` instead: the agent's work without an actor.
    startWorker: spawnChild('worker', { id: 'worker' }),
    startModelCall: sendTo('worker', ({ context }) => modelCall(context)),
    /** Asks the worker to run this turn's tool calls; it sends `TOOLS.DONE` or `TOOLS.FAILED` at the batch's end. */
    startTools: sendTo('worker', ({ context }) => toolsRun(context)),
    /** Leaving `running`: the worker actor stops with the agent, so nothing to do here. */
    stopWork: () => {},
    // Every change of the context, as XState's `assign` (the runtime makes them in place when no inspector watches).
    ...agentChanges(assigned),
    ...budgetActions(),
    releaseSlot: sendParent(({ context }) => ({ type: 'SLOT.RELEASE' as const, id: context.input.id })),
    passOn: sendParent((_, message: Message) => ({ type: 'MESSAGE.SEND' as const, message })),
    requestSlot: sendParent(({ context }) => ({ type: 'SLOT.REQUEST' as const, id: context.input.id })),
  },
});
