// Shared fakes for the tests: small agents, tools that record what they did, and event collectors. The steps of a
// script (toolCall, callTools, assignCall) are shipped in troupe/testing.
import { onTestFinished } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool, type AgentDefinition, type ChatMessage, type TroupeEvent } from 'troupe';
import { ScriptedModel, TestClock, type ScriptedModelOptions, type ScriptStep } from 'troupe/testing';
import type { Observable } from 'rxjs';

/**
 * A {@link ScriptedModel} that replays these steps, and fails the test at its end if any step was left unused
 * (`assertDone`: the run asked the model fewer times than the test scripted). Call it inside a test.
 */
export function scripted(steps: readonly ScriptStep[], options?: ScriptedModelOptions): ScriptedModel {
  return usedUpAtEnd(new ScriptedModel(steps, options));
}

/** {@link ScriptedModel.perAgent}, checked like {@link scripted}: every scripted agent must use its whole list. */
export function scriptedPerAgent(scripts: Readonly<Record<string, readonly ScriptStep[]>>, options?: ScriptedModelOptions): ScriptedModel {
  return usedUpAtEnd(ScriptedModel.perAgent(scripts, options));
}

/** Checks when the current test ends that the model used its whole script (not after a failure: that says more). */
function usedUpAtEnd(model: ScriptedModel): ScriptedModel {
  onTestFinished(({ task }) => {
    if (task.result?.state !== 'fail') model.assertDone();
  });
  return model;
}

/** A fresh simulated clock that knows its next timer (a TestClock). */
export function simulatedClock(): TestClock {
  return new TestClock();
}

/** A read tool named `hang` that never answers: its call ends only when aborted (rejected then). */
export const hang = defineTool({
  name: 'hang',
  description: 'Hangs until aborted.',
  parameters: z.object({}),
  kind: 'read',
  execute: (_, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
});

/** Collects every event of a stream into an array. */
export function collect(events$: Observable<TroupeEvent>): TroupeEvent[] {
  const seen: TroupeEvent[] = [];
  events$.subscribe((event) => seen.push(event));
  return seen;
}

/** A read tool that echoes its text and remembers each call. */
export function echoTool() {
  const calls: string[] = [];
  const tool = defineTool({
    name: 'echo',
    description: 'Echoes the text back.',
    parameters: z.object({ text: z.string() }),
    kind: 'read',
    execute: ({ text }) => {
      calls.push(text);
      return `echo: ${text}`;
    },
  });
  return { tool, calls };
}

/** A read tool with a time limit that never ends on its own: it rejects with its signal's reason when aborted. */
export function neverEnding(name: string, timeoutMs: number) {
  return defineTool({
    name,
    description: 'Never ends on its own.',
    parameters: z.object({}),
    kind: 'read',
    timeoutMs,
    execute: (_, { signal }) => new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
  });
}

/** An agent with the given tools. */
export function worker(name = 'worker', tools: string[] = []) {
  return defineAgent({ name, description: `The ${name}.`, systemPrompt: `You are the ${name}.`, tools });
}

/** The last tool message of a request, or undefined. */
export function lastToolMessage(request: { messages: readonly ChatMessage[] }) {
  const found = [...request.messages].reverse().find((message) => message.role === 'tool');
  return found?.role === 'tool' ? found : undefined;
}

/** The events of one type. */
export function ofType<T extends TroupeEvent['type']>(events: readonly TroupeEvent[], type: T) {
  return events.filter((event): event is Extract<TroupeEvent, { type: T }> => event.type === type);
}

/** An agent that may delegate, with the given tools besides the delegation ones. */
export function leader(name = 'lead', options: Partial<AgentDefinition> = {}) {
  return defineAgent({
    name,
    description: `The ${name}.`,
    systemPrompt: `You are the ${name}; hand work to specialists.`,
    tools: ['assign_task', 'task_output'],
    ...options,
  });
}

/** Lets every pending callback run. */
export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

// ── Messaging ──

/** A resident agent with the given tools: it waits for messages after it answers, until it is stopped. */
export function resident(name: string, tools: string[] = [], options: Partial<AgentDefinition> = {}) {
  return defineAgent({ name, description: `The ${name}.`, systemPrompt: `You are the ${name}.`, tools, resident: true, ...options });
}

/** The last message of a request. */
export function lastMessage(request: { messages: readonly ChatMessage[] }): ChatMessage {
  return request.messages[request.messages.length - 1]!;
}

/** One message as an agent read it (`[message <id> from <sender>( on topic <t>)( in reply to <id>)] <content>`). */
export interface ReadMessage {
  id: string;
  from: string;
  topic?: string;
  replyTo?: string;
  content: string;
}

const RENDERED = /^\[message (\S+) from (\S+)(?: on topic (\S+))?(?: in reply to (\S+))?\] ([\s\S]*)$/;

/** The messages in one text (a user message, or a wait's tool result of one message a line), or [] if it has none. */
export function readMessages(text: string): ReadMessage[] {
  return text
    .split(/\n(?=\[message )/)
    .map((part) => RENDERED.exec(part))
    .filter((match) => match !== null)
    .map(([, id, from, topic, replyTo, content]) => ({
      id: id!,
      from: from!,
      ...(topic === undefined ? {} : { topic }),
      ...(replyTo === undefined ? {} : { replyTo }),
      content: content!,
    }));
}

/** The messages an agent got as user messages (its mail) in a request's conversation, in order. */
export function mailIn(request: { messages: readonly ChatMessage[] }): ReadMessage[] {
  return request.messages.filter((message) => message.role === 'user').flatMap((message) => readMessages(message.content));
}

/** The tool message answering call `callId` in a request's conversation. */
export function toolMessageFor(request: { messages: readonly ChatMessage[] }, callId: string) {
  const found = request.messages.find((message) => message.role === 'tool' && message.toolCallId === callId);
  return found?.role === 'tool' ? found : undefined;
}
