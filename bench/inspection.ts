// Inspection: what the Stately inspector's page is sent, per inspection event, with 10 and with 1,000 agents (each a
// model turn that calls a tool, then an answer), through the real relay to a WebSocket client connected before the
// run. The baseline, in the same run: @statelyai/inspect's own createInspector fed the same XState inspection events,
// each of its messages serialised with JSON.stringify.
import WebSocket from 'ws';
import { z } from 'zod';
import { createInspector } from '@statelyai/inspect';
import type { InspectionEvent } from 'xstate';
import { createRuntime, createStatelyInspector, defineAgent, defineTool } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { report } from './measure.js';

const lookup = defineTool({ name: 'lookup', description: 'Looks a word up.', parameters: z.object({ word: z.string() }), kind: 'read', execute: ({ word }) => `${word}: found` });
const worker = defineAgent({ name: 'worker', description: 'Looks up, then answers.', systemPrompt: 'Look it up, then answer.', tools: ['lookup'] });

interface Sent {
  messages: number;
  bytes: number;
  /** The largest serialised context of a supervisor snapshot. */
  supervisorContext: number;
  /** What @statelyai/inspect's createInspector would have sent for the same events. */
  stock: { messages: number; bytes: number };
}

/** Runs `n` agents under a Stately inspector with one page connected; counts what the page got. */
async function watched(n: number): Promise<Sent> {
  const inspector = createStatelyInspector();
  const socket = new WebSocket(await inspector.socketUrl);
  const sent: Sent = { messages: 0, bytes: 0, supervisorContext: 0, stock: { messages: 0, bytes: 0 } };
  let supervisor: string | undefined;
  socket.on('message', (data: unknown) => {
    const text = String(data);
    sent.messages += 1;
    sent.bytes += Buffer.byteLength(text);
    const message = JSON.parse(text) as { type: string; name?: string; sessionId: string; snapshot?: { context?: unknown } };
    if (message.type === '@xstate.actor' && message.name === 'supervisor') supervisor = message.sessionId;
    if (message.type === '@xstate.snapshot' && message.sessionId === supervisor) {
      sent.supervisorContext = Math.max(sent.supervisorContext, Buffer.byteLength(JSON.stringify(message.snapshot?.context)));
    }
  });
  const closed = new Promise((resolve) => socket.once('close', resolve));
  await new Promise((resolve) => socket.once('open', resolve));
  const stock = createInspector({
    send: (event) => {
      sent.stock.messages += 1;
      sent.stock.bytes += Buffer.byteLength(JSON.stringify(event));
    },
  });
  const model = new ScriptedModel(
    (request) => (request.messages.length < 3 ? callTools(toolCall('lookup', { word: `w${request.messages.length}` }, 'look')) : 'Found it.'),
    { record: false },
  );
  const inspect = (event: InspectionEvent) => {
    inspector.inspect.next?.(event);
    stock.inspect.next?.(event);
  };
  const runtime = createRuntime({ model, agents: [worker], tools: [lookup], maxParallel: 50, inspect, projectAgentDir: false });
  await Promise.all(Array.from({ length: n }, (_, index) => runtime.run('worker', `Look up word ${index}.`)));
  await runtime.shutdown();
  await inspector.close();
  await closed;
  // createInspector converts each event on a timer of its own: let them all fire.
  await new Promise((resolve) => setTimeout(resolve, 50));
  return sent;
}

/** Bytes per inspection event at each size (the first is the small one), and the supervisor's snapshot size. */
export async function inspection(sizes: readonly number[]): Promise<void> {
  await watched(10); // warm up
  const perEvent: number[] = [];
  for (const n of sizes) {
    const sent = await watched(n);
    const bytes = sent.bytes / sent.messages;
    const detail = { agents: n, messages: sent.messages, totalKB: Math.round(sent.bytes / 1024), stockMessages: sent.stock.messages };
    if (perEvent.length === 0) {
      const stock = sent.stock.bytes / sent.stock.messages;
      report({ bench: 'inspection', name: `bytes per inspection event, N=${n}`, value: bytes, unit: 'bytes', baseline: "@statelyai/inspect's createInspector, same events", baselineValue: stock, ratio: bytes / stock, detail });
    } else {
      const small = perEvent[0]!;
      report({ bench: 'inspection', name: `bytes per inspection event, N=${n}`, value: bytes, unit: 'bytes', baseline: `bytes per event at N=${sizes[0]}`, baselineValue: small, ratio: bytes / small, target: 'flat: within 10 % of the small run', pass: bytes / small <= 1.1, detail });
    }
    perEvent.push(bytes);
    report({ bench: 'inspection', name: `largest supervisor snapshot context, N=${n}`, value: sent.supervisorContext, unit: 'bytes', target: 'at most 2 KB, whatever the number of agents', pass: sent.supervisorContext <= 2048 });
  }
}
