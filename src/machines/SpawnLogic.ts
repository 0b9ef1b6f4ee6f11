import { createMachine } from 'xstate';
import type { agentMachine } from './agentMachine.js';
import type { AgentContext, AgentInput } from './agentTypes.js';
import type { groupMachine } from './groupMachine.js';

/**
 * The logic the supervisor makes its actors from: the agent machine and the group machine, as the runtime provided
 * them. It sits in the supervisor's context, which inspectors serialise with every snapshot of the supervisor; a
 * machine serialises as its whole definition (kilobytes), so this serialises as the machines' ids: a reference.
 */
export class SpawnLogic {
  /**
   * The agent logic begun in `running` rather than `pending`, with the same implementations: for an agent admitted
   * with a free slot when it is made. Its first step enters `running.thinking` directly; a step through
   * `pending.queued` and a `START` after it cost about 10 KB and a macrostep per agent. Its initial context has its
   * first turn begun (`firstTurn`): the transition that enters `thinking` begins the turn, and this one has no step but
   * the initial one, whose assign of the context then does it (an assign more costs about 3 KB).
   */
  readonly running: typeof agentMachine;

  constructor(
    /** The agent logic to run (the agent machine with its actors provided). */
    readonly agent: typeof agentMachine,
    /** The logic of groups (pattern runs). */
    readonly group: typeof groupMachine,
    /** An agent's initial context with its first turn begun (what `beginTurn` assigns), as it is made. */
    firstTurn: (context: AgentContext) => AgentContext,
  ) {
    const initial = agent.config.context as (args: { input: AgentInput }) => AgentContext;
    const config = { ...agent.config, initial: 'running', context: (args: { input: AgentInput }) => firstTurn(initial(args)) };
    this.running = createMachine(config as typeof agent.config, agent.implementations) as unknown as typeof agentMachine;
  }

  /** What inspectors and logs see: the ids of the two machines. */
  toJSON(): { agent: string; group: string } {
    return { agent: this.agent.id, group: this.group.id };
  }
}
