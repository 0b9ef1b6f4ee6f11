import { describe, expect, it } from 'vitest';
import { map, Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { EventBase, TroupeEvent, TroupeEventOf, TroupeEventType } from '../../src/events/events.js';
import { foldMetrics } from '../../src/events/foldMetrics.js';
import { applyEvent, createMetrics, emptyFigures, type Figures, type MetricsSnapshot } from '../../src/events/metrics.js';
import { formatMetrics } from '../../src/views/formatMetrics.js';
import { formatTimeline } from '../../src/views/formatTimeline.js';

// ── Building events ───────────────────────────────────────────────────────────────────────────────────

/** The tree of every test: root → child → grandchild, plus a sibling of child and a lone top-level agent. */
const PARENTS: Record<string, string | null> = {
  root: null,
  child: 'root',
  sibling: 'root',
  grandchild: 'child',
  solo: null,
};

function depthOf(id: string): number {
  const parent = PARENTS[id] ?? null;
  return parent === null ? 0 : depthOf(parent) + 1;
}

/** The fields of one event type that the helpers below ask for. */
type Fields<T extends TroupeEventType> = Omit<TroupeEventOf<T>, keyof EventBase | 'type' | 'at'>;

/** An event of `type` about agent `id` at `at` ms, its parent taken from {@link PARENTS}. */
function event<T extends TroupeEventType>(type: T, id: string, at: number, fields: Fields<T>): TroupeEventOf<T> {
  const base = { type, runId: 'run-1', agentId: id, parentId: PARENTS[id] ?? null, toolCallId: null, at };
  return { ...base, ...fields } as TroupeEventOf<T>;
}

const spawned = (id: string, at = 0) => event('agent.spawned', id, at, { name: id, depth: depthOf(id), task: 'do it' });
const started = (id: string, at = 0) => event('agent.started', id, at, { name: id });
const completed = (id: string, at = 0) => event('agent.completed', id, at, { name: id, output: 'done', turns: 1 });
const failed = (id: string, at = 0, reason: 'error' | 'cancelled' = 'error') =>
  event('agent.failed', id, at, { name: id, reason, error: { code: reason === 'error' ? 'unexpected' : 'cancelled', message: reason, fault: 'system' }, turns: 0 });
const request = (id: string, at = 0) => event('model.request', id, at, { turn: 1, model: 'm', messages: 2, tools: 0 });
const response = (id: string, at: number, inputTokens: number, outputTokens: number, costUsd: number) =>
  event('model.response', id, at, { turn: 1, model: 'm', usage: { inputTokens, outputTokens }, costUsd, durationMs: 5, toolCalls: 0 });
const toolCall = (id: string, at = 0) => event('tool.call', id, at, { callId: 'c', tool: 'echo', arguments: '{}' });
const toolResult = (id: string, at: number, status: 'ok' | 'error') =>
  event('tool.result', id, at, { callId: 'c', tool: 'echo', status, durationMs: 1 });

/** Folds events from a fresh seed with the plain reducer. */
function fold(events: TroupeEvent[], seed: MetricsSnapshot = createMetrics()): MetricsSnapshot {
  return events.reduce(applyEvent, seed);
}

/** Figures with the given fields set and every other field zero. */
const figures = (some: Partial<Figures>): Figures => ({ ...emptyFigures(), ...some });

/** A marble-test scheduler whose assertions go through vitest. */
const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

// ── applyEvent ────────────────────────────────────────────────────────────────────────────────────────

describe('applyEvent', () => {
  it('starts from zero figures and no agents', () => {
    const seed = createMetrics();
    expect(seed.total).toEqual({
      ...emptyFigures(),
      agentsSpawned: 0,
      agentsRunning: 0,
      agentsCompleted: 0,
      agentsFailed: 0,
      peakRunning: 0,
    });
    expect(Object.keys(seed.agents)).toEqual([]);
    expect(createMetrics().agents).not.toBe(seed.agents);
  });

  it('totals equal the sum of usage and cost over the model.response events', () => {
    const responses = [
      response('root', 1, 100, 20, 0.1),
      response('child', 2, 7, 3, 0.2),
      response('grandchild', 3, 50, 0, 0.000_001_5),
      response('root', 4, 1, 1, 0.3),
    ];
    const state = fold([spawned('root'), spawned('child'), spawned('grandchild'), ...responses]);
    const sum = (pick: (e: TroupeEventOf<'model.response'>) => number) => responses.reduce((s, e) => s + pick(e), 0);
    expect(state.total).toMatchObject({
      inputTokens: sum((e) => e.usage.inputTokens),
      outputTokens: sum((e) => e.usage.outputTokens),
      modelCalls: responses.length,
    });
    expect(state.total.costUsd).toBeCloseTo(sum((e) => e.costUsd), 12);
    expect(state.agents.root!.own).toEqual(figures({ inputTokens: 101, outputTokens: 21, costUsd: 0.4, modelCalls: 2 }));
  });

  it('sums costs without floating drift', () => {
    const state = fold([spawned('root'), response('root', 1, 0, 0, 0.1), response('root', 2, 0, 0, 0.2)]);
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(state.total.costUsd).toBe(0.3);
    expect(state.agents.root!.subtree.costUsd).toBe(0.3);
  });

  it('rolls a grandchild up into the subtree, not the own figures, of its parent and grandparent', () => {
    const state = fold([
      spawned('root'),
      spawned('child'),
      spawned('sibling'),
      spawned('grandchild'),
      response('grandchild', 1, 10, 5, 0.01),
      toolResult('grandchild', 2, 'error'),
      response('child', 3, 100, 50, 0.1),
      response('sibling', 4, 1000, 500, 1),
      response('root', 5, 10_000, 5000, 10),
    ]);
    const { root, child, sibling, grandchild } = state.agents;

    expect(grandchild).toMatchObject({ parentId: 'child', depth: 2, state: 'pending' });
    expect(grandchild!.own).toEqual(figures({ inputTokens: 10, outputTokens: 5, costUsd: 0.01, modelCalls: 1, toolCalls: 1, toolErrors: 1 }));
    expect(grandchild!.subtree).toEqual(grandchild!.own);

    expect(child!.own).toEqual(figures({ inputTokens: 100, outputTokens: 50, costUsd: 0.1, modelCalls: 1 }));
    expect(child!.subtree).toEqual(
      figures({ inputTokens: 110, outputTokens: 55, costUsd: 0.11, modelCalls: 2, toolCalls: 1, toolErrors: 1 }),
    );
    expect(sibling!.subtree).toEqual(sibling!.own);

    expect(root!.own).toEqual(figures({ inputTokens: 10_000, outputTokens: 5000, costUsd: 10, modelCalls: 1 }));
    expect(root!.subtree).toEqual(
      figures({ inputTokens: 11_110, outputTokens: 5555, costUsd: 11.11, modelCalls: 4, toolCalls: 1, toolErrors: 1 }),
    );
    const { agentsSpawned, agentsRunning, agentsCompleted, agentsFailed, peakRunning, ...totalFigures } = state.total;
    expect(totalFigures).toEqual(root!.subtree);
    expect(agentsSpawned).toBe(4);
  });

  it('counts running agents and the peak through a sequence', () => {
    const steps: [TroupeEvent, number, number][] = [
      [spawned('root'), 0, 0],
      [spawned('solo'), 0, 0],
      [started('root'), 1, 1],
      [spawned('child'), 1, 1],
      [started('child'), 2, 2],
      [started('solo'), 3, 3],
      [completed('child'), 2, 3],
      [spawned('sibling'), 2, 3],
      [started('sibling'), 3, 3],
      [failed('solo'), 2, 3],
      [completed('sibling'), 1, 3],
      [completed('root'), 0, 3],
    ];
    let state = createMetrics();
    for (const [e, running, peak] of steps) {
      state = applyEvent(state, e);
      expect([e.type, e.agentId, state.total.agentsRunning, state.total.peakRunning]).toEqual([e.type, e.agentId, running, peak]);
    }
    expect(state.total).toMatchObject({ agentsSpawned: 4, agentsCompleted: 3, agentsFailed: 1 });
    expect(Object.fromEntries(Object.entries(state.agents).map(([id, a]) => [id, a.state]))).toEqual({
      root: 'completed',
      solo: 'failed',
      child: 'completed',
      sibling: 'completed',
    });
  });

  it('counts tool calls and tool errors', () => {
    const state = fold([
      spawned('root'),
      spawned('child'),
      toolCall('root'),
      toolResult('root', 1, 'ok'),
      toolResult('root', 2, 'error'),
      toolResult('child', 3, 'error'),
      toolResult('child', 4, 'ok'),
      toolResult('child', 5, 'ok'),
    ]);
    expect(state.total).toMatchObject({ toolCalls: 5, toolErrors: 2 });
    expect(state.agents.root!.own).toMatchObject({ toolCalls: 2, toolErrors: 1 });
    expect(state.agents.root!.subtree).toMatchObject({ toolCalls: 5, toolErrors: 2 });
    expect(state.agents.child!.own).toMatchObject({ toolCalls: 3, toolErrors: 1 });
  });

  it('measures durations on the event clock, live and final at the end, summed over subtrees', () => {
    let state = fold([spawned('root', 0), started('root', 10), spawned('child', 15), started('child', 20)]);
    expect(state.agents.root!.own.durationMs).toBe(0);

    state = fold([request('root', 25), response('child', 30, 1, 1, 0)], state);
    expect(state.agents.root!.own.durationMs).toBe(15);
    expect(state.agents.child!.own.durationMs).toBe(10);
    expect(state.agents.root!.subtree.durationMs).toBe(25);
    expect(state.total.durationMs).toBe(25);

    state = fold([completed('child', 50), toolResult('root', 70, 'ok'), completed('root', 110)], state);
    expect(state.agents.child!.own.durationMs).toBe(30);
    expect(state.agents.root!.own.durationMs).toBe(100);
    expect(state.agents.root!.subtree.durationMs).toBe(130);
    expect(state.total.durationMs).toBe(130);

    // An ended agent's clock is stopped; a pending agent's never started.
    state = fold([toolResult('child', 500, 'ok'), spawned('solo', 600), failed('solo', 700, 'cancelled')], state);
    expect(state.agents.child!.own.durationMs).toBe(30);
    expect(state.agents.solo!.own.durationMs).toBe(0);
    expect(state.total.durationMs).toBe(130);
  });

  it('counts an agent that fails while still pending as failed, without touching agentsRunning', () => {
    const state = fold([
      spawned('root'),
      started('root', 1),
      spawned('child', 2),
      failed('child', 3, 'cancelled'),
      failed('child', 4, 'cancelled'),
    ]);
    expect(state.agents.child).toMatchObject({ state: 'failed', own: emptyFigures() });
    expect(state.total).toMatchObject({ agentsRunning: 1, agentsFailed: 1, agentsSpawned: 2, peakRunning: 1 });
  });

  it('returns a new snapshot with a new total but the same live agents record', () => {
    const before = fold([spawned('root'), started('root')]);
    const kept = structuredClone(before);
    const after = applyEvent(before, response('root', 5, 3, 4, 0.5));

    expect(after).not.toBe(before);
    expect(after.total).not.toBe(before.total);
    expect(before.total.modelCalls).toBe(0);
    expect(after.total.modelCalls).toBe(1);
    expect(after.agents).toBe(before.agents);
    expect(before.agents.root!.own.modelCalls).toBe(1);
    expect(kept.agents.root!.own.modelCalls).toBe(0);
  });

  it('adopts an agent first seen mid-run (a late subscriber) instead of throwing', () => {
    const state = fold([
      response('grandchild', 100, 4, 2, 0.25),
      spawned('solo', 100),
      started('solo', 100),
      toolResult('grandchild', 130, 'ok'),
      completed('grandchild', 150),
      completed('child', 160),
      failed('sibling', 170),
    ]);
    expect(state.agents.grandchild).toMatchObject({
      name: 'grandchild',
      state: 'completed',
      parentId: 'child',
      depth: 1,
      startedAt: 100,
      own: figures({ inputTokens: 4, outputTokens: 2, costUsd: 0.25, modelCalls: 1, toolCalls: 1, durationMs: 50 }),
    });
    expect(state.agents.child).toMatchObject({ state: 'completed', parentId: 'root', depth: 1, own: emptyFigures() });
    // The child was adopted after the grandchild, so the grandchild's earlier figures stay out of its subtree.
    expect(state.agents.child!.subtree).toEqual(emptyFigures());
    expect(state.agents.sibling!.state).toBe('failed');
    expect(state.total).toMatchObject({
      agentsSpawned: 4,
      agentsRunning: 1,
      agentsCompleted: 2,
      agentsFailed: 1,
      peakRunning: 2,
      inputTokens: 4,
      modelCalls: 1,
      toolCalls: 1,
      durationMs: 50,
    });
  });

  it('reopens an ended agent that is resumed: pending again, counted once, its duration going on', () => {
    const resumed = { ...spawned('child', 100), resumed: true };
    const metrics = fold([
      spawned('root'), started('root'),
      spawned('child'), started('child', 0), response('child', 40, 10, 1, 0), completed('child', 50),
      resumed, started('child', 200), response('child', 230, 5, 1, 0),
    ]);
    expect(metrics.total).toMatchObject({ agentsSpawned: 2, agentsCompleted: 0, agentsRunning: 2 });
    expect(metrics.agents.child).toMatchObject({ state: 'running', own: figures({ inputTokens: 15, outputTokens: 2, modelCalls: 2, durationMs: 80 }) });
    const ended = applyEvent(metrics, completed('child', 260));
    expect(ended.total).toMatchObject({ agentsCompleted: 1, agentsRunning: 1 });
    expect(ended.agents.child!.own.durationMs).toBe(110);
    expect(ended.agents.root!.subtree.inputTokens).toBe(15);
  });

  it('moves an agent resumed by another caller with what it spawned: each a depth below its parent', () => {
    // `child` (depth 1) spawned `grandchild` (depth 2); `solo` (depth 0) resumes `child`, which stays at depth 1 under it,
    // then `child` is resumed from code at the top (depth 0): its grandchild comes to depth 1.
    const metrics = fold([spawned('root'), spawned('child'), spawned('grandchild'), spawned('solo')]);
    expect(metrics.agents.grandchild!.depth).toBe(2);
    const underSolo = applyEvent(metrics, { ...spawned('child', 10), parentId: 'solo', resumed: true });
    expect(underSolo.agents.child).toMatchObject({ parentId: 'solo', depth: 1 });
    expect(underSolo.agents.grandchild!.depth).toBe(2);
    const top = applyEvent(underSolo, { ...spawned('child', 20), parentId: null, depth: 0, resumed: true });
    expect(top.agents.child).toMatchObject({ parentId: null, depth: 0 });
    expect(top.agents.grandchild!.depth).toBe(1);
    expect(top.agents.root!.depth).toBe(0);
  });

  it('drops a parent link that would close a cycle', () => {
    const bad = { ...spawned('root'), parentId: 'root' };
    const state = fold([bad, response('root', 1, 1, 1, 0)]);
    expect(state.agents.root!.parentId).toBeNull();
    expect(state.agents.root!.subtree.modelCalls).toBe(1);
  });

  it('handles an agent id that is an Object.prototype key', () => {
    const state = fold([{ ...spawned('root'), agentId: 'constructor' }]);
    expect(state.agents['constructor']).toMatchObject({ name: 'root', state: 'pending' });
    expect(state.total.agentsSpawned).toBe(1);
  });
});

// ── foldMetrics ───────────────────────────────────────────────────────────────────────────────────────

describe('foldMetrics', () => {
  it('emits one snapshot per event, in virtual time', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const events$ = cold('a-b--c-d|', {
        a: spawned('root'),
        b: started('root', 1),
        c: response('root', 3, 10, 2, 0.02),
        d: completed('root', 4),
      });
      const totals$ = events$.pipe(
        foldMetrics(),
        map(({ total }) => [total.agentsSpawned, total.agentsRunning, total.modelCalls, total.inputTokens, total.durationMs]),
      );
      expectObservable(totals$).toBe('a-b--c-d|', {
        a: [1, 0, 0, 0, 0],
        b: [1, 1, 0, 0, 0],
        c: [1, 1, 1, 10, 2],
        d: [1, 0, 1, 10, 3],
      });
    });
  });

  it('rolls a three-level tree up in virtual time (snapshots cloned, since agents are live)', () => {
    scheduler().run(({ hot, expectObservable }) => {
      const events$ = hot('^-a-b-c-d-e-f|', {
        a: spawned('root'),
        b: spawned('child'),
        c: spawned('grandchild'),
        d: response('grandchild', 4, 10, 1, 0.5),
        e: response('child', 5, 20, 2, 0.25),
        f: completed('grandchild', 6),
      });
      const view$ = events$.pipe(
        foldMetrics(),
        map((snapshot) => structuredClone(snapshot)),
        map(({ agents }) => Object.fromEntries(Object.entries(agents).map(([id, a]) => [id, [a.own.inputTokens, a.subtree.inputTokens]]))),
      );
      expectObservable(view$).toBe('--a-b-c-d-e-f|', {
        a: { root: [0, 0] },
        b: { root: [0, 0], child: [0, 0] },
        c: { root: [0, 0], child: [0, 0], grandchild: [0, 0] },
        d: { root: [0, 10], child: [0, 10], grandchild: [10, 10] },
        e: { root: [0, 30], child: [20, 30], grandchild: [10, 10] },
        f: { root: [0, 30], child: [20, 30], grandchild: [10, 10] },
      });
    });
  });

  it('counts tool errors and running peaks in a marble stream', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const events$ = cold('abcdefgh|', {
        a: spawned('root'),
        b: started('root'),
        c: spawned('child'),
        d: started('child'),
        e: toolResult('child', 1, 'error'),
        f: toolResult('root', 2, 'ok'),
        g: completed('child', 3),
        h: failed('root', 4),
      });
      const totals$ = events$.pipe(
        foldMetrics(),
        map(({ total }) => `${total.agentsRunning}/${total.peakRunning}/${total.toolCalls}/${total.toolErrors}`),
      );
      expectObservable(totals$).toBe('abcdefgh|', {
        a: '0/0/0/0',
        b: '1/1/0/0',
        c: '1/1/0/0',
        d: '2/2/0/0',
        e: '2/2/1/1',
        f: '2/2/2/1',
        g: '1/2/2/1',
        h: '0/2/2/1',
      });
    });
  });

  it('gives two subscriptions independent state', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const events$ = cold('a-b-c|', {
        a: spawned('root'),
        b: started('root'),
        c: response('root', 1, 5, 5, 0.1),
      });
      const metrics$ = events$.pipe(foldMetrics());
      const calls = (snapshot: MetricsSnapshot) => `${snapshot.total.agentsSpawned}:${snapshot.total.modelCalls}`;
      expectObservable(metrics$.pipe(map(calls))).toBe('a-b-c|', { a: '1:0', b: '1:0', c: '1:1' });
      expectObservable(metrics$.pipe(map(calls)), '---^').toBe('---a-b-c|', { a: '1:0', b: '1:0', c: '1:1' });
    });
  });

  it('does not share the agents record between subscriptions', () => {
    const events$ = new Subject<TroupeEvent>();
    const metrics$ = events$.pipe(foldMetrics());
    const first: MetricsSnapshot[] = [];
    const second: MetricsSnapshot[] = [];
    metrics$.subscribe((s) => first.push(s));
    events$.next(spawned('root'));
    metrics$.subscribe((s) => second.push(s));
    events$.next(spawned('solo'));

    expect(first.at(-1)!.agents).not.toBe(second.at(-1)!.agents);
    expect(Object.keys(first.at(-1)!.agents)).toEqual(['root', 'solo']);
    expect(Object.keys(second.at(-1)!.agents)).toEqual(['solo']);
    expect(second.at(-1)!.total.agentsSpawned).toBe(1);
  });
});

describe('formatMetrics', () => {
  it('shows every agent the total counts: one whose parent was never seen (a fold that joined late) is a row at the top', () => {
    // The fold starts after `root` was spawned: `child` and its `grandchild` hang under an agent it never saw.
    const state = [spawned('child', 10), started('child', 10), response('child', 30, 7, 3, 0), spawned('grandchild', 30), started('grandchild', 30)]
      .reduce(applyEvent, createMetrics());

    const rows = formatMetrics(state).split('\n');

    expect(state.total.agentsSpawned).toBe(2);
    expect(rows).toHaveLength(4); // the header, child, grandchild under it, the total
    expect(rows[1]).toMatch(/^child\s+running\s+7\s+3\s/);
    expect(rows[2]).toMatch(/^ {2}grandchild\s+running\s+0\s+0\s/);
  });
});

describe('formatTimeline', () => {
  it("leaves a resumed agent's row blank between its runs: it ran 0–10 and 50–60 of 60 ms", () => {
    const events = [
      spawned('solo', 0), started('solo', 0), completed('solo', 10),
      { ...spawned('solo', 50), resumed: true }, started('solo', 50), completed('solo', 60),
    ];

    const row = formatTimeline(events, { width: 12 }).split('\n')[0]!;

    // 12 columns of 5 ms: 0–10 ms are columns 0–2, 50–60 ms columns 10–11.
    expect(row).toBe('solo  ███       ██  ok');
  });
});
