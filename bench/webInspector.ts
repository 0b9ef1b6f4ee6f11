// The web inspector: what the page's model costs per event (RunModel, against the terminal view's LiveTree folding the
// same events in the same run), and how fast the server streams a run to a page (server-sent events over loopback,
// read by a client as a page's EventSource would), against a target of 10,000 events a second.
import { get } from 'node:http';
import { z } from 'zod';
import { createRuntime, createWebInspector, defineAgent, defineTool, type TroupeEvent } from 'troupe';
import { callTools, ScriptedModel, TestClock, toolCall } from 'troupe/testing';
import { LiveTree } from '../src/views/LiveTree.js';
import { RunModel } from '../src/views/RunModel.js';
import { report } from './measure.js';

const lookup = defineTool({ name: 'lookup', description: 'Looks a word up.', parameters: z.object({ word: z.string() }), kind: 'read', execute: ({ word }) => `${word}: found` });
const worker = defineAgent({ name: 'worker', description: 'Looks up, then answers.', systemPrompt: 'Look it up, then answer.', tools: ['lookup'] });

/** The events of `n` agents, each a model turn that calls a tool, then an answer (simulated time). */
async function runEvents(n: number): Promise<TroupeEvent[]> {
  const model = new ScriptedModel((request) => (request.messages.length < 3 ? callTools(toolCall('lookup', { word: 'w' }, 'look')) : 'Found it.'), { record: false, latencyMs: 5 });
  const runtime = createRuntime({ model, agents: [worker], tools: [lookup], maxParallel: 100, clock: new TestClock(), projectAgentDir: false, seed: 1 });
  const events: TroupeEvent[] = [];
  runtime.events$.subscribe((event) => events.push(event));
  for (let index = 0; index < n; index += 1) runtime.spawn('worker', `Look up word ${index}.`);
  await runtime.runUntilIdle();
  await runtime.shutdown();
  return events;
}

/** µs per event to fold `events` into a fresh model, best of a few tries. */
function foldCost(events: readonly TroupeEvent[], make: () => { apply(event: TroupeEvent): unknown }): number {
  let best = Infinity;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const model = make();
    const started = performance.now();
    for (const event of events) model.apply(event);
    best = Math.min(best, performance.now() - started);
  }
  return (best * 1000) / events.length;
}

/** Events a second the server streams a run to one page: pushed all at once, read until its end. */
async function streamRate(events: readonly TroupeEvent[]): Promise<{ perSecond: number; bytesPerEvent: number }> {
  const inspector = createWebInspector();
  const url = await inspector.url;
  let bytes = 0;
  const started = performance.now();
  const done = new Promise<void>((resolve) => {
    get(`${url}api/events`, (response) => {
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        bytes += Buffer.byteLength(chunk);
        if (chunk.includes('event: end\n')) resolve();
      });
    });
  });
  for (const event of events) inspector.push(event);
  inspector.end();
  await done;
  const seconds = (performance.now() - started) / 1000;
  await inspector.close();
  return { perSecond: events.length / seconds, bytesPerEvent: bytes / events.length };
}

/** The page's model per event, and the server's stream rate, for a run of `agents` agents. */
export async function webInspector(agents: number): Promise<void> {
  const events = await runEvents(agents);
  foldCost(events, () => new RunModel()); // warm up
  const model = foldCost(events, () => new RunModel());
  const tree = foldCost(events, () => new LiveTree());
  const detail = { agents, events: events.length };
  report({ bench: 'web inspector', name: `page model per event, ${agents} agents`, value: model, unit: 'µs', baseline: "the terminal's LiveTree, same events", baselineValue: tree, ratio: model / tree, detail });
  const stream = await streamRate(events);
  const json = events.reduce((sum, event) => sum + Buffer.byteLength(JSON.stringify(event)) + 1, 0) / events.length;
  report({ bench: 'web inspector', name: `server stream to a page, ${agents} agents`, value: stream.perSecond, unit: 'events/s', target: 'at least 10,000 events a second', pass: stream.perSecond >= 10_000, detail });
  report({ bench: 'web inspector', name: `bytes per event streamed, ${agents} agents`, value: stream.bytesPerEvent, unit: 'bytes', baseline: 'the same event as a JSON line', baselineValue: json, ratio: stream.bytesPerEvent / json, detail });
}
