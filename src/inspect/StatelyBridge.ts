import type { StatelyActorEvent, StatelyEventEvent, StatelySnapshotEvent } from '@statelyai/inspect';
import type { AnyActor, AnyActorLogic, InspectionEvent, Observer } from 'xstate';
import type { Redactor } from '../redaction.js';

/**
 * The `_version` every message carries: the version of `@statelyai/inspect` whose protocol the messages follow (its
 * receiver only takes messages whose `_version` is a string). A test checks it against the installed package.
 */
export const STATELY_PROTOCOL_VERSION = '0.7.2';

/** Gets each message for the inspector as the JSON text to send. */
export type StatelyListener = (message: string) => void;

type InspectedEvent = Extract<InspectionEvent, { type: '@xstate.event' }>;
type InspectedSnapshot = Extract<InspectionEvent, { type: '@xstate.snapshot' }>;

/** An actor the inspector has been told of (or will be, when it connects). */
interface Known {
  readonly sessionId: string;
  /** What the inspector shows: its id (an agent's worker with its agent's id, `worker:agent:x:Xy12`). */
  readonly name: string;
  readonly parentId: string | undefined;
  readonly rootId: string;
  readonly definition: string | undefined;
  readonly createdAt: string;
  /** True for machines (the supervisor, agents, groups): kept with their last snapshot after they end. */
  readonly lasting: boolean;
  /** Its latest snapshot, while it lives. */
  snapshot: unknown;
  /** Its last snapshot as JSON text, once it has ended. */
  final?: string;
}

/**
 * Turns XState's inspection events into the messages of the Stately inspector's protocol (the `@xstate.actor`,
 * `@xstate.event` and `@xstate.snapshot` messages of `@statelyai/inspect`), and keeps what a client that connects
 * late needs: the registration and latest snapshot of every actor.
 *
 * - An actor is announced when it starts (its `xstate.init` event): its snapshot is then its first state, and its
 *   parent is the actor that started it. XState reports an actor before it has a snapshot, when it is made.
 * - An agent's worker (its model calls and tool batches, a child of the agent) is named after its agent:
 *   `worker:agent:code-reviewer:Xy12`.
 * - No message is about an actor the inspector was not told of: an event to an actor never announced is left out, and
 *   one from such an actor comes without its source.
 * - A listener that subscribes gets every actor first (its registration with its latest snapshot, in the order they
 *   started), then every message from then on. Machines (the supervisor, agents, groups) are kept after they end, with
 *   their last snapshot, so a page opened after the run still shows it; an agent's worker is forgotten when it ends.
 * - Nothing is serialised while no one listens, but the last snapshot of a machine that ends. Every string in events and
 *   snapshots passes through the redactor, so secrets never reach the page.
 */
export class StatelyBridge implements Observer<InspectionEvent> {
  /** Actors XState reported, not started yet. */
  private readonly made = new Map<string, AnyActor>();
  private readonly known = new Map<string, Known>();
  private readonly listeners = new Set<StatelyListener>();
  private readonly definitions = new WeakMap<AnyActorLogic, string | undefined>();
  private sequence = 0;

  constructor(private readonly options: { redactor?: Redactor; now?: () => number } = {}) {}

  /** Takes one inspection event (the bridge is an XState inspection observer). */
  next(event: InspectionEvent): void {
    if (event.type === '@xstate.actor') this.made.set(event.actorRef.sessionId, event.actorRef as AnyActor);
    else if (event.type === '@xstate.event') this.onEvent(event);
    else if (event.type === '@xstate.snapshot') this.onSnapshot(event);
  }

  /**
   * Sends `listener` every actor known now (its registration with its latest snapshot), then every message until the
   * returned function is called.
   */
  subscribe(listener: StatelyListener): () => void {
    for (const known of this.known.values()) listener(this.registration(known));
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** How many actors a listener that subscribes now is told of. */
  get actors(): number {
    return this.known.size;
  }

  private onEvent(event: InspectedEvent): void {
    const { sessionId } = event.actorRef;
    if (event.event.type === 'xstate.init') this.announce(event);
    const target = this.known.get(sessionId);
    if (!target) return;
    const source = event.sourceRef ? this.known.get(event.sourceRef.sessionId) : undefined;
    this.emit(() => {
      const message: StatelyEventEvent = {
        type: '@xstate.event',
        event: event.event,
        sourceId: source?.sessionId,
        ...this.header(sessionId, event.rootId),
      };
      return this.serialise(message);
    });
  }

  private onSnapshot(event: InspectedSnapshot): void {
    const { sessionId } = event.actorRef;
    const known = this.known.get(sessionId);
    if (!known) {
      this.made.delete(sessionId);
      return;
    }
    known.snapshot = event.snapshot;
    this.emit(() => {
      const message: StatelySnapshotEvent = {
        type: '@xstate.snapshot',
        event: event.event,
        snapshot: event.snapshot as StatelySnapshotEvent['snapshot'],
        ...this.header(sessionId, event.rootId),
      };
      return this.serialise(message);
    });
    if (event.snapshot.status === 'active') return;
    if (known.lasting) {
      known.final = this.serialise(event.snapshot);
      known.snapshot = undefined;
    } else {
      this.known.delete(sessionId);
    }
  }

  /** Registers an actor as it starts (its `xstate.init` event, sent by the actor that started it). */
  private announce(event: InspectedEvent): void {
    const { sessionId } = event.actorRef;
    const actor = this.made.get(sessionId);
    if (!actor) return;
    this.made.delete(sessionId);
    const parent = event.sourceRef ? this.known.get(event.sourceRef.sessionId) : undefined;
    const known: Known = {
      sessionId,
      // An agent's own id is its systemId (its actor id is its kind, `agent:<name>`).
      // A child without a name in the system (an agent's `worker`) is named after its parent: `worker:agent:lead:Xy12`.
      name: actor.systemId ?? (parent ? `${actor.id}:${parent.name}` : actor.id),
      parentId: parent?.sessionId,
      rootId: event.rootId,
      definition: this.definitionOf(actor.logic, actor.id),
      createdAt: this.now(),
      lasting: isMachine(actor.logic),
      snapshot: actor.getSnapshot(),
    };
    this.known.set(sessionId, known);
    this.emit(() => this.registration(known));
  }

  /** An actor's registration, with its latest snapshot. */
  private registration(known: Known): string {
    const message: Omit<StatelyActorEvent, 'snapshot'> = {
      type: '@xstate.actor',
      name: known.name,
      definition: known.definition,
      parentId: known.parentId,
      sessionId: known.sessionId,
      rootId: known.rootId,
      createdAt: known.createdAt,
      id: this.nextId(),
      _version: STATELY_PROTOCOL_VERSION,
    };
    const text = this.serialise(message);
    // The last snapshot of an ended actor is kept as JSON text: it goes in as it is.
    return `${text.slice(0, -1)},"snapshot":${known.final ?? this.serialise(known.snapshot)}}`;
  }

  private header(sessionId: string, rootId: string) {
    return { sessionId, rootId, createdAt: this.now(), id: this.nextId(), _version: STATELY_PROTOCOL_VERSION };
  }

  /** Sends a message to every listener, made only when someone listens. */
  private emit(message: () => string): void {
    if (this.listeners.size === 0) return;
    const text = message();
    for (const listener of this.listeners) listener(text);
  }

  /**
   * JSON text with every string redacted (a definition is the machine's own text, left as it is), errors as their name
   * and message, and anything JSON cannot hold (a cycle, a function) left out rather than failing the run.
   */
  private serialise(value: unknown): string {
    try {
      return JSON.stringify(value, this.replace) ?? 'null';
    } catch {
      return JSON.stringify({ unserialisable: true });
    }
  }

  private readonly replace = (key: string, value: unknown): unknown => {
    if (typeof value === 'string') return key === 'definition' || !this.options.redactor ? value : this.options.redactor.redactText(value);
    if (value instanceof Error) return { name: value.name, message: value.message };
    if (typeof value === 'bigint') return value.toString();
    return value;
  };

  /** A machine's configuration as JSON (functions by name), once per logic; another logic is named by its id. */
  private definitionOf(logic: AnyActorLogic, id: string): string | undefined {
    if (!this.definitions.has(logic)) {
      const config = (logic as { config?: unknown }).config;
      let definition: string | undefined;
      try {
        definition = isMachine(logic) ? JSON.stringify(config, functionsByName) : JSON.stringify({ id });
      } catch {
        definition = undefined;
      }
      // Only a machine's definition is the same for every actor of its logic.
      if (!isMachine(logic)) return definition;
      this.definitions.set(logic, definition);
    }
    return this.definitions.get(logic);
  }

  private now(): string {
    return String((this.options.now ?? Date.now)());
  }

  private nextId(): string {
    this.sequence += 1;
    return String(this.sequence);
  }
}

/** True for a state machine's logic (its configuration is an object; a promise's or a callback's is a function). */
function isMachine(logic: AnyActorLogic): boolean {
  const config = (logic as { config?: unknown }).config;
  return typeof config === 'object' && config !== null;
}

/** Functions in a machine's configuration (inline guards, params) as `{ type: name }`, as the inspector shows them. */
function functionsByName(_key: string, value: unknown): unknown {
  return typeof value === 'function' ? { type: value.name || 'anonymous' } : value;
}
