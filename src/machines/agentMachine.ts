import type { ActorRefFrom } from 'xstate';
import { actingState } from './agentActing.js';
import { initialContext, outcomeOf } from './agentContext.js';
import { agentSetup, wake } from './agentSetup.js';
import { thinkingState } from './agentThinking.js';

export type { AgentBudget, AgentEvent, AgentInput, AgentOutcome, ApprovalHold } from './agentTypes.js';

/**
 * One agent's lifecycle: `pending` → `running` (`thinking` ⇄ `acting`) → `completed` | `failed`.
 *
 * - `pending.queued` waits for the supervisor's `START`. An agent the supervisor admits with a free slot as it makes it
 *   begins in `running` instead (made from this machine begun there, `SpawnLogic.running`), unless an inspector
 *   watches, where every agent begins pending. A delegation that needs a person's approval waits in
 *   `pending.awaitingApproval` until `APPROVE`; `DENY` fails it with `denied`, `CANCEL` with `cancelled`.
 * - `running.thinking` asks the agent's worker for a model call (`MODEL.CALL`); a reply with tool calls goes to
 *   `acting`, one without completes the agent with its text. `running.acting` has the worker run the tool calls
 *   (`TOOLS.RUN`) and goes back to `thinking`, or fails with `max_turns` once `maxTurns` model turns are used. The
 *   worker (`agentWorker`) is one child actor for the agent's life, started when the agent enters `running` and
 *   stopped with it; without an inspector the runtime does the same work without the actor (`workActions`), stopped
 *   by `stopWork` when the agent leaves `running`.
 * - An agent that waits for its sub-agents lends its slot to them (`YIELD`, `acting.waitingForAgents`) and gets
 *   one back (`RESUME`) before it thinks again (`running.waitingForSlot` if its tools end first).
 * - An idle timeout on the runtime's clock fails the agent with `timeout`; it restarts on every step and is
 *   paused while an interactive tool waits for a person or the agent waits for its sub-agents.
 * - `CANCEL` stops the running model call or tools through their AbortSignal and fails with `cancelled`; `STOP`
 *   does the same but completes the agent with its last answer when it has one.
 * - Messages: mail that reached the agent's inbox is read at the start of its next turn. A resident agent does not
 *   complete when it answers: it waits in `running.waiting` (without a slot) until a message comes; tool calls that
 *   wait for messages or replies wait there too. Woken, it asks for a slot (`running.waitingForSlot`) and thinks.
 *   The `finish` tool ends an agent after its batch; a resident that runs out of turns or budget completes with its
 *   last answer.
 *
 * Every step emits a `TroupeEvent`; the output is an `AgentOutcome`. The `worker` actor is given by the runtime
 * (`agentMachine.provide({ actors: { worker } })`); without it every turn fails clearly. Its
 * timers and timestamps run on the real clock unless the actions that read the time are provided for another
 * (`agentMachine.provide({ actions: clockedAgentActions(clock) })`), as the runtime does for its own clock.
 */
export const agentMachine = agentSetup.createMachine({
  id: 'agent',
  context: ({ input }) => initialContext(input),
  entry: 'announceSpawned',
  initial: 'pending',
  states: {
    pending: {
      on: {
        CANCEL: { target: 'failed', actions: 'failCancelled' },
        STOP: { target: 'failed', actions: 'failStopped' },
        DENY: { target: 'failed', actions: ['announceApprovalDenied', 'failDenied'] },
      },
      initial: 'queued',
      states: {
        queued: {
          on: {
            START: { target: '#agent.running', actions: 'beginTurn' },
            HOLD: { target: 'awaitingApproval', actions: ['hold', 'announceApprovalRequested'] },
          },
        },
        awaitingApproval: {
          on: { APPROVE: { target: 'queued', actions: 'announceApprovalGranted' } },
        },
      },
    },
    running: {
      entry: ['announceStarted', 'startWorker'],
      exit: 'stopWork',
      on: {
        CANCEL: { target: 'failed', actions: 'failCancelled' },
        STOP: [
          { guard: 'hasAnswer', target: '#agent.completed', actions: 'settle' },
          { target: '#agent.failed', actions: 'failStopped' },
        ],
        YIELD: { actions: 'yieldSlot' },
        RESUME: { actions: 'takeSlot' },
      },
      initial: 'thinking',
      states: {
        thinking: thinkingState,
        acting: actingState,
        waiting: {
          // Entered only through `parkWithAnswer` or `parkAfterBatch`, which give the slot up in their own assign. The
          // agent says it waits before it hands the slot back: the supervisor (at once when no inspector watches) may
          // start another agent with it, whose events come after.
          entry: ['announceWaiting', 'releaseSlot'],
          on: {
            MESSAGE: wake,
            WAKE: wake,
            // A slot that comes back while the agent waits for messages (one it lent its sub-agents) goes back again.
            RESUME: { actions: ['yieldSlot', 'releaseSlot'] },
          },
        },
        waitingForSlot: {
          // The turn begins holding the slot (`beginTurn`).
          on: { RESUME: { target: 'thinking', actions: 'beginTurn' } },
        },
      },
    },
    completed: { type: 'final', entry: 'announceCompleted' },
    failed: { type: 'final', entry: ['settle', 'announceFailed'] },
  },
  output: ({ context }) => outcomeOf(context),
});

/** An agent actor. */
export type AgentActorRef = ActorRefFrom<typeof agentMachine>;

