import { agentSetup, endOfBatch, endOfBatchThenThink, parkAfterBatch, remindAfterFinish } from './agentSetup.js';

/**
 * `running.acting`: one batch of tool calls, run by the agent's worker (`TOOLS.RUN`, see `startToolBatch`). It waits for a person
 * (`waitingForPerson`) or for sub-agents (`waitingForAgents`, its slot lent) as its tools need; at the batch's end the
 * agent finishes, runs out of turns, waits for messages (`waiting`) or thinks again (through `waitingForSlot` without a
 * slot).
 */
export const actingState = agentSetup.createStateConfig({
    entry: 'startTools',
    on: {
      // A tool's message leaves through the agent, so an inspector sees it pass from the sender to the supervisor.
      'MESSAGE.OUT': { actions: { type: 'passOn', params: ({ event }) => event.message } },
      // Every branch first appends the batch's tool messages and counts its calls.
      'TOOLS.DONE': [
        // The two common ends first, one guard each (see batchEndGuards): the chain below decides the same for them.
        { guard: 'parksAfterBatch', target: 'waiting', actions: parkAfterBatch },
        { guard: 'thinksAfterBatch', target: 'thinking', actions: endOfBatchThenThink },
        {
          // `finish` before the required tools were called: told which, the agent goes on while it has turns.
          // One guard each (no `and`): every batch's end is checked against them, and `and` costs allocations.
          guard: 'finishesTooEarlyOnLastTurn',
          target: '#agent.failed',
          actions: [...endOfBatch, 'failRequiredTools'],
        },
        { guard: 'finishesTooEarlyWithSlot', target: 'thinking', actions: [...remindAfterFinish, 'beginTurn'] },
        { guard: 'finishesTooEarly', target: 'waitingForSlot', actions: remindAfterFinish },
        {
          guard: 'finishesWithAnswer',
          target: '#agent.completed',
          actions: [...endOfBatch, { type: 'recordFinish', params: ({ event }) => event }, 'settle'],
        },
        {
          guard: 'finishes',
          target: '#agent.failed',
          actions: [...endOfBatch, 'failNoAnswer'],
        },
        {
          // A resident out of turns ends with its last answer.
          guard: 'residentOutOfTurnsWithAnswer',
          target: '#agent.completed',
          actions: [...endOfBatch, 'settle'],
        },
        {
          guard: 'turnsUsed',
          target: '#agent.failed',
          actions: [...endOfBatch, 'failOutOfTurns'],
        },
        { guard: 'waitsWithoutMail', target: 'waiting', actions: parkAfterBatch },
        { guard: 'holdsSlot', target: 'thinking', actions: endOfBatchThenThink },
        { target: 'waitingForSlot', actions: endOfBatch },
      ],
      'TOOLS.FAILED': {
        target: '#agent.failed',
        actions: { type: 'failTools', params: ({ event }) => event.error },
      },
    },
    initial: 'working',
    states: {
      working: {
        entry: 'startIdleTimer',
        exit: 'stopIdleTimer',
        on: {
          'TOOL.WAITING': { target: 'waitingForPerson', actions: 'personWaiting' },
          YIELD: { target: 'waitingForAgents', actions: 'yieldSlot' },
          IDLE: { target: '#agent.failed', actions: 'failToolsIdle' },
        },
      },
      waitingForPerson: {
        on: {
          'TOOL.WAITING': { actions: 'personWaiting' },
          'TOOL.RESUMED': [
            { guard: 'lastPersonAnsweredWithSlot', target: 'working', actions: 'personAnswered' },
            { guard: 'lastPersonAnswered', target: 'waitingForAgents', actions: 'personAnswered' },
            { actions: 'personAnswered' },
          ],
        },
      },
      waitingForAgents: {
        on: {
          'TOOL.WAITING': { target: 'waitingForPerson', actions: 'personWaiting' },
          RESUME: { target: 'working', actions: 'takeSlot' },
        },
      },
    },
});
