// Shared fakes for the tests: small agents, tools that record what they did, and event collectors.
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { defineAgent, defineTool, type AgentDefinition, type ChatMessage, type TroupeEvent } from 'troupe';
import type { Observable } from 'rxjs';

/** A tool call as a model would send it. */
export function call(name: string, args: unknown, id = `call_${name}`) {
  return { id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}

/** A reply that asks for the given tool calls. */
export function toolReply(...calls: ReturnType<typeof call>[]) {
  return { content: '', toolCalls: calls };
}

/** A fresh simulated clock. */
export function simulatedClock(): SimulatedClock {
  return new SimulatedClock();
}

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

/** An agent with the given tools. */
export function worker(name = 'worker', tools: string[] = []) {
  return defineAgent({ name, description: `The ${name}.`, systemPrompt: `You are the ${name}.`, tools });
}

/** A delegation call as a model would send it. */
export function assign(agent: string, task: string, extra: Record<string, unknown> = {}, id = `call_${agent}`) {
  return call('assign_task', { description: `work for ${agent}`, agent, task, ...extra }, id);
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
