import { and } from 'xstate';
import { errorInfo } from '../failure.js';
import { failure } from './agentContext.js';
import { agentSetup, failWith } from './agentSetup.js';

/**
 * `running.thinking`: one model turn. It reads the agent's mail first, starts the idle timer, invokes `callModel`,
 * and sends the reply where it belongs: to `acting` for tool calls, to `waiting` for a resident's answer, to
 * `completed` for a final answer (or `failed`: an empty answer, a budget crossed, a model error, no progress).
 */
export const thinkingState = agentSetup.createStateConfig({
    entry: [
      'takeMail',
      'beginTurn',
      'startIdleTimer',
      {
        type: 'announce',
        params: ({ context }) => ({
          type: 'model.request',
          turn: context.turns,
          model: context.input.model,
          messages: context.messages.length,
          tools: context.input.tools.length,
        }),
      },
    ],
    exit: 'stopIdleTimer',
    invoke: {
      src: 'callModel',
      input: ({ context }) => ({
        agentId: context.input.id,
        agentName: context.input.name,
        depth: context.input.depth,
        messages: context.messages,
      }),
      onDone: [
        {
          guard: { type: 'residentOverBudget', params: ({ event }) => event.output },
          target: '#agent.completed',
          actions: [
            { type: 'recordResidentAnswer', params: ({ event }) => event.output },
            'dropToolCalls',
            { type: 'announceReply', params: ({ event }) => event.output },
            'settle',
          ],
        },
        {
          guard: { type: 'overBudget', params: ({ event }) => event.output },
          target: '#agent.failed',
          actions: [
            { type: 'recordTurn', params: ({ event }) => event.output },
            'dropToolCalls',
            { type: 'announceReply', params: ({ event }) => event.output },
            { type: 'fail', params: failure('budget', 'budget_exceeded', 'user', 'The agent went over its budget.') },
          ],
        },
        {
          guard: { type: 'wantsTools', params: ({ event }) => event.output },
          target: 'acting',
          actions: [
            { type: 'recordTurn', params: ({ event }) => event.output },
            { type: 'announceReply', params: ({ event }) => event.output },
          ],
        },
        {
          // A resident on its last turn ends with its answer (this turn's, or its last).
          guard: and(['resident', 'turnsUsed', 'answers']),
          target: '#agent.completed',
          actions: [
            { type: 'recordResidentAnswer', params: ({ event }) => event.output },
            { type: 'announceReply', params: ({ event }) => event.output },
            'settle',
          ],
        },
        {
          guard: and(['resident', 'turnsUsed']),
          target: '#agent.failed',
          actions: [
            { type: 'recordTurn', params: ({ event }) => event.output },
            { type: 'announceReply', params: ({ event }) => event.output },
            { type: 'fail', params: ({ context }) => failure('max_turns', 'max_turns', 'user', `The agent used all ${context.input.maxTurns} turns without an answer.`) },
          ],
        },
        {
          // A resident that answered while mail came in reads it at once.
          guard: and(['resident', 'mailReady']),
          target: 'thinking',
          reenter: true,
          actions: [
            { type: 'recordResidentAnswer', params: ({ event }) => event.output },
            { type: 'announceReply', params: ({ event }) => event.output },
          ],
        },
        {
          guard: 'resident',
          target: 'waiting',
          actions: [
            { type: 'recordResidentAnswer', params: ({ event }) => event.output },
            { type: 'announceReply', params: ({ event }) => event.output },
          ],
        },
        {
          guard: { type: 'emptyAnswer', params: ({ event }) => event.output },
          target: '#agent.failed',
          actions: [
            { type: 'recordTurn', params: ({ event }) => event.output },
            { type: 'announceReply', params: ({ event }) => event.output },
            { type: 'fail', params: failure('error', 'empty_answer', 'model', 'The model gave an empty answer.', true) },
          ],
        },
        {
          target: '#agent.completed',
          actions: [
            { type: 'recordAnswer', params: ({ event }) => event.output },
            { type: 'announceReply', params: ({ event }) => event.output },
          ],
        },
      ],
      onError: {
        target: '#agent.failed',
        actions: { type: 'fail', params: ({ event }) => ({ reason: 'error', error: errorInfo(event.error, 'model') }) },
      },
    },
    on: {
      IDLE: failWith('timeout', 'idle_timeout', 'model', (context) => `No progress for ${context.input.idleTimeoutMs} ms while waiting for the model.`, true),
    },
});
