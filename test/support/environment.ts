// A small, real AgentEnvironment for tests of the agent's actors (callModel, runTools) on their own: a real catalog
// and ToolAccess (allow-list, depth limit, each tool's own plan and describe hooks), a RuntimeClock over a
// SimulatedClock, a seeded RandomSource per agent, and announcements kept in an array. Delegation and messaging
// are not part of these tests and throw.
import { SimulatedClock } from 'xstate';
import type { AgentEnvironment, ResolvedAgent } from '../../src/actors/agentEnvironment.js';
import { AgentCatalog } from '../../src/catalog/AgentCatalog.js';
import type { AgentDefinition } from '../../src/catalog/defineAgent.js';
import { ToolAccess } from '../../src/catalog/ToolAccess.js';
import type { TroupeEvent } from '../../src/events/events.js';
import { InMemoryMemory } from '../../src/memory/InMemoryMemory.js';
import { NoteStore } from '../../src/memory/NoteStore.js';
import { Blackboard } from '../../src/messaging/Blackboard.js';
import type { Model } from '../../src/models/Model.js';
import { defaultPrices, type PriceTable } from '../../src/models/prices.js';
import { RandomSource } from '../../src/random.js';
import { RuntimeClock } from '../../src/runtime/RuntimeClock.js';
import type { Tool } from '../../src/tools/defineTool.js';

/** What a test environment is made of; everything has a default. */
export interface TestEnvironmentOptions {
  /** The model of agents that name none (default: one that throws, for runTools tests). */
  model?: Model;
  /** The agents (default: one `worker` listing every tool given). */
  agents?: readonly AgentDefinition[];
  /** The runtime's tools, which agents may list by name (the built-in ones are known too). */
  tools?: readonly Tool[];
  /** Tool calls of one turn running at once (default 10). */
  maxToolConcurrency?: number;
  /** The delegation limit (default 3). */
  maxDepth?: number;
  /** Prices (default: the built-in table). */
  prices?: PriceTable;
  /** The run's seed (default 42). */
  seed?: number;
  /** Where simulated time starts (default 1000, so a time of 0 in an event would stand out). */
  startAt?: number;
}

/** The environment, with what tests look at: the clocks, what was announced, the waits dropped. */
export interface TestEnvironment extends AgentEnvironment {
  readonly clock: RuntimeClock;
  /** The simulated clock under {@link clock}. */
  readonly simulated: SimulatedClock;
  /** Every event `announce` was given, in order. */
  readonly events: TroupeEvent[];
  /** Every `dropWait(agentId, callId)`, in order. */
  readonly droppedWaits: { agentId: string; callId: string }[];
  /** The agent of that name, as `resolve` gives it. */
  agent(name?: string): ResolvedAgent;
  /** Moves simulated time forward by `ms`, firing the timers due by then. */
  advance(ms: number): void;
}

const noModel: Model = {
  name: 'no-model',
  complete: () => Promise.reject(new Error('No model in this test.')),
};

/** Makes a {@link TestEnvironment}. */
export function testEnvironment(options: TestEnvironmentOptions = {}): TestEnvironment {
  const tools = options.tools ?? [];
  const agents = options.agents ?? [
    { name: 'worker', description: 'Does the work.', systemPrompt: 'You work.', tools: tools.map((tool) => tool.name) },
  ];
  const catalog = new AgentCatalog(agents, {
    model: options.model ?? noModel,
    tools,
    maxToolConcurrency: options.maxToolConcurrency ?? 10,
  });
  const access = new ToolAccess(catalog, options.maxDepth ?? 3);
  const simulated = new SimulatedClock();
  simulated.set(options.startAt ?? 1000);
  const clock = new RuntimeClock(simulated);
  const seed = new RandomSource(options.seed ?? 42);
  const randoms = new Map<string, RandomSource>();
  const events: TroupeEvent[] = [];
  const droppedWaits: { agentId: string; callId: string }[] = [];
  // A service this test does not give: a call's context is made with it, and any of its methods throws when called.
  const notHere = (what: string) => (): never =>
    new Proxy({}, {
      get: (_target, key) =>
        typeof key === 'symbol' || key === 'then'
          ? undefined
          : () => {
              throw new Error(`${what} is not in this test.`);
            },
    }) as never;
  return {
    clock,
    simulated,
    events,
    droppedWaits,
    prices: options.prices ?? defaultPrices,
    blackboard: new Blackboard(),
    notes: new NoteStore(new InMemoryMemory()),
    resolve: (name) => catalog.resolve(name),
    toolSchemas: (agent, depth, agentId) => access.offered(agent, depth, agentId),
    toolFor: (agent, depth, toolName) => access.toolFor(agent, depth, toolName),
    plan: (tool, args) => access.plan(tool, args),
    watched: () => true, // its events are kept in `events`
    delegation: notHere('Delegation'),
    messaging: notHere('Messaging'),
    random: (agentId) => {
      let random = randoms.get(agentId);
      if (!random) randoms.set(agentId, (random = seed.fork(agentId)));
      return random;
    },
    announce: (event) => events.push(event),
    dropWait: (agentId, callId) => droppedWaits.push({ agentId, callId }),
    reserveTurn: () => undefined,
    agent: (name = 'worker') => catalog.resolve(name),
    advance: (ms) => clock.advanceTo(clock.now() + ms),
  };
}

/** Lets every pending promise callback run (after the microtask queue has drained). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
