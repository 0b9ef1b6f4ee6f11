// Without an inspector an agent's context changes in place (`inPlace`): one object for the agent's life. That is sound
// only while every change leaves what it is given as it was (what was read from the context before, a conversation
// handed to a model call or a tool batch, a checkpoint, keeps its value) and sets what `assign` would. Each change
// runs here on a context whose every part is frozen: a change that pushed to an array or set a field of a record
// would throw (modules run in strict mode).
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import type { ModelTurn } from '../../src/actors/callModel.js';
import { agentChanges, inPlace } from '../../src/machines/agentChanges.js';
import { clockedAgentActions, type Mailbox } from '../../src/machines/agentClock.js';
import { initialContext, withBatch, withTurn, type BatchEnd } from '../../src/machines/agentContext.js';
import type { AgentContext, AgentEvent, AgentInput } from '../../src/machines/agentTypes.js';
import type { Message } from '../../src/messaging/Message.js';
import { budgetActions } from '../../src/machines/agentSetup.js';

const input: AgentInput = {
  id: 'agent:trader:a1',
  name: 'trader',
  runId: 'run-1',
  parentId: null,
  toolCallId: null,
  depth: 0,
  task: 'Trade.',
  systemPrompt: 'You trade.',
  model: 'scripted',
  tools: ['publish', 'wait_for_messages'],
  history: [{ role: 'user', content: 'earlier' }],
  historyLimit: 4,
  maxTurns: 10,
  idleTimeoutMs: 1_000,
  budget: { maxTokens: 1 },
  requiredToolCalls: ['publish'],
};

const toolTurn: ModelTurn = {
  content: 'ordering',
  toolCalls: [
    { id: 'c1', name: 'publish', arguments: '{"topic":"orders","content":"bid"}' },
    { id: 'c2', name: 'wait_for_messages', arguments: '{}' },
  ],
  inputTokens: 12,
  outputTokens: 5,
  model: 'scripted',
  costUsd: 0.01,
  durationMs: 3,
};
const answer: ModelTurn = { ...toolTurn, content: 'Done.', toolCalls: [] };
const batch: BatchEnd = {
  messages: [
    { role: 'tool', toolCallId: 'c1', content: 'published' },
    { role: 'tool', toolCallId: 'c2', content: 'waiting' },
  ],
  ended: 2,
  failed: 0,
};
const mail: Message = { id: 'm1', from: 'agent:auctioneer:b1', to: 'topic:market', topic: 'market', content: '100', sentAt: 0 };
/** A mailbox with one answered wait and one message, every time it is asked. */
const mailbox: Mailbox = {
  hasMail: () => true,
  take: () => ({
    answers: [{ callId: 'c2', content: 'price 100', isError: false, tool: 'wait_for_messages', outcome: 'message', messages: 1, durationMs: 4 }],
    mail: [mail],
  }),
};

/** The context of an agent that has called tools once (with `fields` set), every part of it frozen. */
function frozenContext(fields: Partial<AgentContext> = {}): AgentContext {
  const begun = initialContext(input);
  const context: AgentContext = { ...begun, turns: 1, startedAt: 5, output: 'so far', holdsSlot: true, waitingForPeople: 1, ...withTurn(begun, toolTurn) };
  Object.assign(context, withBatch(context, batch));
  Object.assign(context, withTurn(context, toolTurn)); // the last message asks for tool calls again
  Object.assign(context, fields);
  deepFreeze(context.input);
  deepFreeze(context.messages);
  deepFreeze(context.own);
  deepFreeze(context.required);
  return context;
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const part of Object.values(value)) deepFreeze(part);
}

type Change = (args: never, params: never) => void;
const event = (type: string, extra: object = {}) => ({ type, ...extra }) as unknown as AgentEvent;

// Every change, with the params and event it gets in the machine.
const clock = new SimulatedClock();
const changes = {
  ...agentChanges(inPlace),
  ...clockedAgentActions(clock, mailbox, () => {}, inPlace),
  ...budgetActions(() => 'over the budget', inPlace),
} as unknown as Record<string, Change>;
const cases: [name: string, params: unknown, event: AgentEvent, before?: Partial<AgentContext>][] = [
  ['beginTurn', undefined, event('MESSAGE')],
  ['endBatchAndBeginTurn', batch, event('TOOLS.DONE')],
  ['recordAnswer', answer, event('MODEL.DONE')],
  ['settle', undefined, event('STOP')],
  ['takeSlot', undefined, event('RESUME'), { holdsSlot: false }],
  ['yieldSlot', undefined, event('YIELD')],
  ['hold', undefined, event('HOLD', { requestId: 'r1', risk: 'high', reason: 'writes' })],
  ['recordTurn', toolTurn, event('MODEL.DONE')],
  ['dropToolCalls', undefined, event('MODEL.DONE')],
  ['appendToolMessages', batch, event('TOOLS.DONE')],
  ['remindRequired', answer, event('MODEL.DONE')],
  ['remindAfterFinish', batch, event('TOOLS.DONE')],
  ['parkAfterBatch', batch, event('TOOLS.DONE')],
  ['recordResidentAnswer', answer, event('MODEL.DONE')],
  ['parkWithAnswer', answer, event('MODEL.DONE')],
  ['recordFinish', { finish: { answer: 'Finished.' } }, event('TOOLS.DONE')],
  ['personWaiting', undefined, event('TOOL.WAITING')],
  ['personAnswered', undefined, event('TOOL.RESUMED')],
  ['failCancelled', undefined, event('CANCEL', { reason: 'no longer needed' })],
  ['failStopped', undefined, event('STOP')],
  ['failDenied', undefined, event('DENY', { reason: 'not now' })],
  ['failOutOfTurns', undefined, event('MODEL.DONE')],
  ['failRequiredTools', undefined, event('TOOLS.DONE')],
  ['failOverBudget', toolTurn, event('MODEL.DONE')],
  ['dropRefusedTurn', undefined, event('MODEL.FAILED')],
  ['failBudgetSpent', { message: 'The budget over this agent is spent.' }, event('MODEL.FAILED')],
  ['failEmptyAnswer', undefined, event('MODEL.DONE')],
  ['failNoAnswer', undefined, event('TOOLS.DONE')],
  ['failModelIdle', undefined, event('IDLE')],
  ['failToolsIdle', undefined, event('IDLE')],
  ['failModel', new Error('model down'), event('MODEL.FAILED')],
  ['failTools', { message: 'batch crashed', code: 'error', fault: 'tool' }, event('TOOLS.FAILED')],
];

describe("an agent's context changed in place", () => {
  it('covers every change the machine makes', () => {
    const made = Object.keys(changes).filter((name) => !/^(announce|startIdleTimer|stopIdleTimer)/.test(name));
    expect(cases.map(([name]) => name).sort()).toEqual(made.sort());
  });

  it.each(cases)('%s leaves every part it was given as it was, and changes only its own fields', (name, params, cause, fields) => {
    const context = frozenContext(fields);
    const before = { ...context };
    const messages = context.messages;
    (changes[name] as (args: { context: AgentContext; event: AgentEvent }, params: unknown) => void)({ context, event: cause }, params);
    // The conversation read before the change is the same array, with the same messages.
    expect(messages).toBe(before.messages);
    expect(messages).toHaveLength(before.messages.length);
    // The same object, now with what the change set; what it did not set is as it was.
    const changed = Object.keys(context).filter((key) => context[key as keyof AgentContext] !== before[key as keyof AgentContext]);
    expect(changed.length).toBeGreaterThan(0);
    for (const key of changed) expect(['messages', 'own', 'required', 'turns', 'holdsSlot', 'startedAt', 'output', 'failure', 'approval', 'waitingForPeople']).toContain(key);
    expect(context.input).toBe(before.input);
  });

  it('records a turn, a batch and the next turn as assign would: the same fields, with the window kept', () => {
    const context = frozenContext();
    const expected = { ...context, ...withTurn(context, toolTurn) };
    (changes.recordTurn as (args: { context: AgentContext; event: AgentEvent }, params: ModelTurn) => void)({ context, event: event('MODEL.DONE') }, toolTurn);
    expect(context).toEqual(expected);
    expect(context.messages.length).toBeLessThanOrEqual(1 + input.historyLimit!);
  });
});
