import { and } from 'xstate';
import type { BudgetSpentError } from '../errors.js';
import type { ModelTurn } from '../actors/callModel.js';
import { agentSetup } from './agentSetup.js';

/** The turn the model call returned: the params of the guards and actions that read it. */
const turn = ({ event }: { event: { output: ModelTurn } }) => event.output;
/** Announces the turn's reply. */
const reply = { type: 'announceReply' as const, params: turn };

/**
 * `running.thinking`: one model turn, begun (counted, its mail read into the conversation) by the transition that
 * enters it. It starts the idle timer, asks the agent's worker for the model call (`MODEL.CALL`), and sends the reply
 * (`MODEL.DONE`) where it belongs: to `acting` for tool calls, to `waiting` for a resident's answer, back to `thinking`
 * with a reminder for a final answer before the required tools, to `completed` for a final answer (or `failed`: an
 * empty answer, a budget crossed, a model error, no progress, required tools never called).
 */
export const thinkingState = agentSetup.createStateConfig({
  // The turn was begun (`beginTurn`) by the transition that entered `thinking`, in its own step's assign where it has one.
  entry: ['startIdleTimer', 'announceModelRequest', 'startModelCall'],
  exit: 'stopIdleTimer',
  on: {
    // The turn's model call answered (the worker's `MODEL.DONE`). Every branch announces the reply (`model.response`)
    // after recording it.
    'MODEL.DONE': [
      {
        // The common end first, so it is found with one guard: a final answer of an agent that is not resident and owes
        // no required tool (none of the branches below would take it before the last).
        guard: { type: 'plainAnswer', params: turn },
        target: '#agent.completed',
        actions: [{ type: 'recordAnswer', params: turn }, reply],
      },
      {
        // The common turn next: tool calls within every budget (what the budget guards and `wantsTools` below decide).
        guard: { type: 'toolTurnWithinBudget', params: turn },
        target: 'acting',
        actions: [{ type: 'recordTurn', params: turn }, reply],
      },
      {
        guard: { type: 'residentOverBudget', params: turn },
        target: '#agent.completed',
        actions: [{ type: 'recordResidentAnswer', params: turn }, 'dropToolCalls', reply, 'settle'],
      },
      {
        guard: { type: 'overBudget', params: turn },
        target: '#agent.failed',
        // The failure is made first: it names the budget and limit crossed, from the figures the guard saw.
        actions: [{ type: 'failOverBudget', params: turn }, { type: 'recordTurn', params: turn }, 'dropToolCalls', reply],
      },
      {
        guard: { type: 'wantsTools', params: turn },
        target: 'acting',
        actions: [{ type: 'recordTurn', params: turn }, reply],
      },
      {
        // A resident on its last turn ends with its answer (this turn's, or its last).
        guard: and(['resident', 'turnsUsed', 'answers']),
        target: '#agent.completed',
        actions: [{ type: 'recordResidentAnswer', params: turn }, reply, 'settle'],
      },
      {
        guard: and(['resident', 'turnsUsed']),
        target: '#agent.failed',
        actions: [{ type: 'recordTurn', params: turn }, reply, 'failOutOfTurns'],
      },
      {
        // A resident that answered while mail came in reads it at once.
        guard: 'residentWithMail',
        target: 'thinking',
        reenter: true,
        actions: [{ type: 'recordResidentAnswer', params: turn }, reply, 'beginTurn'],
      },
      {
        guard: 'resident',
        target: 'waiting',
        actions: [{ type: 'parkWithAnswer', params: turn }, reply],
      },
      {
        // A final answer before the required tools were called: told which, it goes on while it has turns.
        guard: and(['answersTooEarly', 'turnsUsed']),
        target: '#agent.failed',
        actions: [{ type: 'recordTurn', params: turn }, reply, 'failRequiredTools'],
      },
      {
        guard: 'answersTooEarly',
        target: 'thinking',
        reenter: true,
        actions: [{ type: 'remindRequired', params: turn }, reply, 'beginTurn'],
      },
      {
        guard: { type: 'emptyAnswer', params: turn },
        target: '#agent.failed',
        actions: [{ type: 'recordTurn', params: turn }, reply, 'failEmptyAnswer'],
      },
      {
        target: '#agent.completed',
        actions: [{ type: 'recordAnswer', params: turn }, reply],
      },
    ],
    'MODEL.FAILED': [
      // A spent budget stopped the turn before the model was called: a resident ends with its last answer.
      { guard: and(['budgetSpent', 'resident', 'hasAnswer']), target: '#agent.completed', actions: ['dropRefusedTurn', 'settle'] },
      {
        guard: 'budgetSpent',
        target: '#agent.failed',
        actions: ['dropRefusedTurn', { type: 'failBudgetSpent', params: ({ event }: { event: { error: unknown } }) => event.error as BudgetSpentError }],
      },
      { target: '#agent.failed', actions: { type: 'failModel', params: ({ event }: { event: { error: unknown } }) => event.error } },
    ],
    IDLE: { target: '#agent.failed', actions: 'failModelIdle' },
    // The model call waits to try again: that is progress, so the idle timer starts over.
    'MODEL.RETRY': { actions: 'startIdleTimer' },
  },
});
