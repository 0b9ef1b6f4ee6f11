import type { TroupeEvent, TroupeEventOf } from '../events/events.js';
import { addCost } from '../events/metrics.js';

/** Where a node of the live tree is in its life. */
export type LiveState = 'pending' | 'running' | 'waiting' | 'completed' | 'failed';

/** One tool call of an agent, as the live tree shows it. */
export interface LiveToolCall {
  readonly callId: string;
  readonly tool: string;
  /** The arguments as the model wrote them (JSON text). */
  readonly args: string;
  state: 'running' | 'ok' | 'error';
  /** When it began, on the runtime's clock. */
  readonly startedAt: number;
  /** How long it took, once it ended. */
  durationMs?: number;
  /**
   * Why it failed, when it did; `cut short: …` for a call still running when its agent ended (a wait for messages
   * when it was stopped, a tool when it was cancelled), which no event ends and no figure counts as an error.
   */
  error?: string;
}

/** An agent's own figures, as the live tree counts them. */
export interface LiveFigures {
  /** Tool calls made (counted when they begin). */
  toolCalls: number;
  /** Tool calls that ended in an error. */
  toolErrors: number;
  modelCalls: number;
  /** Input and output tokens together. */
  tokens: number;
  costUsd: number;
}

/** One agent (or group) of the live tree. Its fields change in place as events come. */
export interface LiveAgent {
  readonly id: string;
  readonly name: string;
  /** The name, or `name#2`, `name#3`, … for later agents of the same name: unique in the tree, stable. */
  readonly label: string;
  /** The caller's short description of the task, or the task. */
  description: string;
  /** Its caller: the one that started it, or the one that resumed it last (it moves there, as in the metrics). */
  parentId: string | null;
  /** The parent's tool call that started (or resumed) it: the tree shows the agent in that call's place. */
  toolCallId: string | null;
  /** Its depth in the tree (0 for a top-level node; a group counts too). */
  depth: number;
  /** A group (a pattern run): no model of its own. */
  readonly group: boolean;
  state: LiveState;
  spawnedAt: number;
  startedAt?: number;
  endedAt?: number;
  /**
   * How long it ran in its earlier runs, when it was resumed or restarted (zero otherwise): its time adds them up, as
   * its figures do and as the metrics' `durationMs` does.
   */
  ranMs: number;
  /** Its latest tool calls, oldest first (at most {@link LiveTree.TOOLS_KEPT}). */
  readonly tools: LiveToolCall[];
  /** The tool call the latest `tool.result`, `tool.denied` or `tool.wait_ended` of the node ended (kept or not). */
  lastEnded?: LiveToolCall;
  readonly children: LiveAgent[];
  readonly figures: LiveFigures;
  /** The final answer, once it completed. */
  result?: string;
  /** Why it failed, once it did. */
  failure?: { reason: string; message: string };
  /** The risk of a delegation waiting for a person, while it waits. */
  approval?: string;
  /** The item of its todo list in progress (`todo_write`), while there is one. */
  doing?: string;
}

/** The figures of the whole run, for the footer. */
export interface LiveTotals extends LiveFigures {
  /** Agents seen (groups not counted). */
  agents: number;
  running: number;
  completed: number;
  failed: number;
}

/**
 * The model of a run that the terminal view draws: every agent as a node under its parent, with its latest tool
 * calls, its figures and how it ended. It is folded from events one at a time, each costing O(1) (a hundred
 * thousand events cost nothing), so the view renders it at its own rate instead of per event.
 */
export class LiveTree {
  /** How many tool calls a node keeps: the latest ones (a long-lived agent makes thousands). */
  static readonly TOOLS_KEPT = 6;
  /** The top-level nodes, in the order they were spawned. */
  readonly roots: LiveAgent[] = [];
  readonly totals: LiveTotals = { agents: 0, running: 0, completed: 0, failed: 0, toolCalls: 0, toolErrors: 0, modelCalls: 0, tokens: 0, costUsd: 0 };
  /** Rises with every change, so a view can tell whether it has anything new to draw. */
  version = 0;
  /** The time of the latest event, on the runtime's clock. */
  lastAt = 0;
  private readonly agents = new Map<string, LiveAgent>();
  private readonly calls = new Map<string, LiveToolCall>();
  /** Per node, its calls no longer kept in `tools` that still run: their ends still count, and show. */
  private readonly unkept = new Map<LiveAgent, LiveToolCall[]>();
  private readonly names = new Map<string, number>();

  /** The node of an agent or group id. */
  get(id: string): LiveAgent | undefined {
    return this.agents.get(id);
  }

  /** Folds one event in; returns the node it changed, or undefined when the tree shows nothing of it. */
  apply(event: TroupeEvent): LiveAgent | undefined {
    this.lastAt = Math.max(this.lastAt, event.at);
    const node = event.type === 'agent.spawned' ? this.spawned(event) : this.agents.get(event.agentId);
    if (!node || !this.change(node, event)) return undefined;
    this.version += 1;
    return node;
  }

  private spawned(event: TroupeEventOf<'agent.spawned'>): LiveAgent {
    const known = this.agents.get(event.agentId);
    if (known) {
      // Resumed: the same node runs again, with its new task; its figures go on adding up.
      if (known.state === 'completed' || known.state === 'failed') this.count(known, known.state, -1);
      if (known.startedAt !== undefined && known.endedAt !== undefined) known.ranMs += known.endedAt - known.startedAt;
      known.description = event.description ?? event.task;
      if (known.parentId !== event.parentId || known.toolCallId !== event.toolCallId) this.move(known, event.parentId, event.toolCallId);
      known.state = 'pending';
      known.spawnedAt = event.at;
      delete known.startedAt;
      delete known.endedAt;
      delete known.result;
      delete known.failure;
      return known;
    }
    const parent = event.parentId === null ? undefined : this.agents.get(event.parentId);
    const seen = (this.names.get(event.name) ?? 0) + 1;
    this.names.set(event.name, seen);
    const node: LiveAgent = {
      id: event.agentId,
      name: event.name,
      label: seen === 1 ? event.name : `${event.name}#${seen}`,
      description: event.description ?? event.task,
      parentId: event.parentId,
      toolCallId: event.toolCallId,
      depth: parent ? parent.depth + 1 : 0,
      group: event.group === true,
      state: 'pending',
      spawnedAt: event.at,
      ranMs: 0,
      tools: [],
      children: [],
      figures: { toolCalls: 0, toolErrors: 0, modelCalls: 0, tokens: 0, costUsd: 0 },
    };
    this.agents.set(node.id, node);
    (parent ? parent.children : this.roots).push(node);
    if (!node.group) this.totals.agents += 1;
    return node;
  }

  /**
   * Moves a node resumed by another caller under that caller, in the place of the tool call that resumed it, with what
   * it started (each a level below its parent), as the metrics move it. An unknown caller, or one below the node
   * itself, leaves it where it is.
   */
  private move(node: LiveAgent, parentId: string | null, toolCallId: string | null): void {
    const parent = parentId === null ? undefined : this.agents.get(parentId);
    if (parentId !== null && parent === undefined) return;
    for (let up = parent; up !== undefined; up = up.parentId === null ? undefined : this.agents.get(up.parentId)) {
      if (up === node) return;
    }
    const siblings = node.parentId === null ? this.roots : this.agents.get(node.parentId)?.children;
    const at = siblings?.indexOf(node) ?? -1;
    if (at >= 0) siblings!.splice(at, 1);
    (parent ? parent.children : this.roots).push(node);
    node.parentId = parentId;
    node.toolCallId = toolCallId;
    const by = (parent ? parent.depth + 1 : 0) - node.depth;
    const shift = (moved: LiveAgent) => {
      moved.depth += by;
      moved.children.forEach(shift);
    };
    if (by !== 0) shift(node);
  }

  /** Applies an event to its node; false when the event changes nothing the tree shows. */
  private change(node: LiveAgent, event: TroupeEvent): boolean {
    switch (event.type) {
      case 'agent.spawned':
        return true;
      case 'agent.started':
        node.startedAt ??= event.at;
        this.enter(node, 'running');
        return true;
      case 'agent.waiting':
        this.enter(node, 'waiting');
        return true;
      case 'model.response': {
        const tokens = event.usage.inputTokens + event.usage.outputTokens;
        this.add(node, { modelCalls: 1, tokens, costUsd: event.costUsd });
        if (node.state === 'waiting') this.enter(node, 'running');
        return true;
      }
      case 'tool.call':
        this.toolCalled(node, event);
        return true;
      case 'tool.result':
        // A call that waits for messages runs on until its wait ends (`tool.wait_ended`).
        return event.waiting ? false : this.toolEnded(node, event);
      case 'tool.denied':
      case 'tool.wait_ended':
        return this.toolEnded(node, event);
      case 'approval.requested':
        node.approval = event.risk;
        return true;
      case 'approval.granted':
      case 'approval.denied':
        delete node.approval;
        return true;
      case 'agent.completed':
        node.result = event.output;
        this.end(node, 'completed', event.at);
        return true;
      case 'agent.failed':
        node.failure = { reason: event.reason, message: event.error.message };
        this.end(node, 'failed', event.at);
        return true;
      case 'todo.updated': {
        const doing = event.items.find((item) => item.status === 'in_progress')?.content;
        if (doing === node.doing) return false;
        if (doing === undefined) delete node.doing;
        else node.doing = doing;
        return true;
      }
      case 'agent.restarted': // the node runs again from its next `agent.spawned`; the plain view prints a line
      case 'agent.escalated':
        return true;
      default:
        return false;
    }
  }

  private toolCalled(node: LiveAgent, event: TroupeEventOf<'tool.call'>): void {
    const call: LiveToolCall = { callId: event.callId, tool: event.tool, args: event.arguments, state: 'running', startedAt: event.at };
    node.tools.push(call);
    if (node.tools.length > LiveTree.TOOLS_KEPT) {
      const dropped = node.tools.shift()!;
      // A call still running (a wide turn, a wait for messages) is kept aside until it ends.
      if (dropped.state === 'running') this.unkept.set(node, [...(this.unkept.get(node) ?? []), dropped]);
      else if (this.calls.get(`${node.id} ${dropped.callId}`) === dropped) this.calls.delete(`${node.id} ${dropped.callId}`);
    }
    this.calls.set(`${node.id} ${call.callId}`, call);
    this.add(node, { toolCalls: 1 });
    if (node.state === 'waiting') this.enter(node, 'running');
  }

  /** Ends a tool call; false when it had ended already (a denied call is followed by its error result), or is not kept. */
  private toolEnded(node: LiveAgent, event: TroupeEventOf<'tool.result' | 'tool.denied' | 'tool.wait_ended'>): boolean {
    let call = this.calls.get(`${node.id} ${event.callId}`);
    const unkept = this.unkept.size === 0 ? undefined : this.unkept.get(node);
    if (call?.state !== 'running') {
      // Calls of one turn that share an id (scripted models' default ids do): the latest ended, an earlier one ends now.
      const running = (candidate: LiveToolCall) => candidate.callId === event.callId && candidate.state === 'running';
      call = unkept?.find(running) ?? node.tools.find(running);
    }
    if (!call) return false;
    node.lastEnded = call;
    if (unkept?.includes(call)) this.forgetUnkept(node, call);
    const denied = event.type === 'tool.denied';
    call.state = denied || event.status === 'error' ? 'error' : 'ok';
    // A wait's call lasted until its answer was read.
    call.durationMs = event.type === 'tool.result' ? event.durationMs : event.at - call.startedAt;
    const error = denied ? `denied (${event.reason})` : event.error;
    if (error !== undefined) call.error = error;
    if (call.state === 'error') this.add(node, { toolErrors: 1 });
    return true;
  }

  private add(node: LiveAgent, figures: Partial<LiveFigures>): void {
    for (const [key, value] of Object.entries(figures) as [keyof LiveFigures, number][]) {
      if (key === 'costUsd') {
        // On the metrics' grid, so the figures shown are the metrics' (no `0.0012659999999999998`).
        node.figures.costUsd = addCost(node.figures.costUsd, value);
        this.totals.costUsd = addCost(this.totals.costUsd, value);
        continue;
      }
      node.figures[key] += value;
      this.totals[key] += value;
    }
  }

  private enter(node: LiveAgent, state: 'running' | 'waiting'): void {
    if (node.state === 'completed' || node.state === 'failed') return;
    if (!node.group && node.state === 'pending') this.totals.running += 1;
    node.state = state;
  }

  private end(node: LiveAgent, state: 'completed' | 'failed', at: number): void {
    if (!node.group && (node.state === 'running' || node.state === 'waiting')) this.totals.running -= 1;
    node.state = state;
    node.endedAt = at;
    delete node.approval;
    this.count(node, state, 1);
    // Its calls still running were cut short (their batch stopped, or their wait dropped): none will end on its own.
    for (const call of this.unkept.get(node) ?? []) {
      cutShort(call, at);
      if (this.calls.get(`${node.id} ${call.callId}`) === call) this.calls.delete(`${node.id} ${call.callId}`);
    }
    this.unkept.delete(node);
    for (const call of node.tools) cutShort(call, at);
  }

  /** An unkept call has ended: nothing holds it any more. */
  private forgetUnkept(node: LiveAgent, call: LiveToolCall): void {
    const left = (this.unkept.get(node) ?? []).filter((candidate) => candidate !== call);
    if (left.length > 0) this.unkept.set(node, left);
    else this.unkept.delete(node);
    if (this.calls.get(`${node.id} ${call.callId}`) === call) this.calls.delete(`${node.id} ${call.callId}`);
  }

  private count(node: LiveAgent, state: 'completed' | 'failed', by: number): void {
    if (node.group) return;
    if (state === 'completed') this.totals.completed += by;
    else this.totals.failed += by;
  }
}

/** A call still running when its agent ended: it will not end on its own, and counts as no error. */
function cutShort(call: LiveToolCall, at: number): void {
  if (call.state !== 'running') return;
  call.state = 'error';
  call.durationMs = at - call.startedAt;
  call.error = 'cut short: the agent ended';
}
