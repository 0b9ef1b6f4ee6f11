import { fromCallback, type EventObject } from 'xstate';
import { z } from 'zod';
import { clockNow, sleep, type Clock } from '../clock.js';
import { AbortedError, ToolTimeoutError, errorMessage } from '../errors.js';
import type { ChatMessage, ToolCall } from '../models/Model.js';
import type { Tool } from '../tools/defineTool.js';
import { executePlan } from '../tools/executePlan.js';
import { schedule } from '../tools/schedule.js';
import type { AgentEnvironment, ResolvedAgent } from './agentEnvironment.js';

/** What one batch of tool calls needs. */
export interface RunToolsInput {
  agentId: string;
  agentName: string;
  toolCalls: readonly ToolCall[];
}

/** A tool message: the one answer to one tool call. */
export type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

/** The events `runTools` sends back to its agent while it works. */
export type ToolProgress =
  | { type: 'TOOL.STARTED'; callId: string; tool: string; arguments: string }
  | { type: 'TOOL.ENDED'; callId: string; tool: string; status: 'ok' | 'error'; durationMs: number; error?: string }
  | { type: 'TOOL.WAITING'; callId: string }
  | { type: 'TOOL.RESUMED'; callId: string }
  | { type: 'TOOLS.DONE'; messages: ToolMessage[] }
  | { type: 'TOOLS.FAILED'; error: string };

/** A call that passed every check and may run. */
interface ReadyCall {
  call: ToolCall;
  tool: Tool;
  args: unknown;
  targets: readonly string[] | undefined;
}

/**
 * Makes the `runTools` actor logic: runs one turn's tool calls and sends back progress and, at the end, one tool
 * message per call, in the order of the calls. A call that names an unknown tool, whose arguments are not JSON or
 * fail the tool's schema, that throws, or that times out becomes an error message the model sees; nothing here
 * fails the agent. Valid calls run in the planner's order (reads side by side, conflicting writes one after
 * another). Stopping the actor aborts every running tool through its AbortSignal.
 */
export function createRunTools(environment: AgentEnvironment) {
  return fromCallback<EventObject, RunToolsInput>(({ input, sendBack, system }) => {
    const controller = new AbortController();
    const send = (event: ToolProgress) => {
      if (!controller.signal.aborted) sendBack(event);
    };
    runBatch(environment.resolve(input.agentName), input, system._clock, controller.signal, send).then(
      (messages) => send({ type: 'TOOLS.DONE', messages }),
      (error: unknown) => send({ type: 'TOOLS.FAILED', error: errorMessage(error) }),
    );
    return () => controller.abort(new AbortedError('The agent stopped while its tools ran.'));
  });
}

async function runBatch(
  agent: ResolvedAgent,
  input: RunToolsInput,
  clock: Clock,
  signal: AbortSignal,
  send: (event: ToolProgress) => void,
): Promise<ToolMessage[]> {
  const messages: ToolMessage[] = new Array(input.toolCalls.length);
  const ready: { index: number; ready: ReadyCall }[] = [];
  input.toolCalls.forEach((call, index) => {
    const checked = check(agent, call);
    if (typeof checked === 'string') {
      send({ type: 'TOOL.STARTED', callId: call.id, tool: call.name, arguments: call.arguments });
      send({ type: 'TOOL.ENDED', callId: call.id, tool: call.name, status: 'error', durationMs: 0, error: checked });
      messages[index] = { role: 'tool', toolCallId: call.id, content: `Error: ${checked}`, isError: true };
    } else {
      ready.push({ index, ready: checked });
    }
  });
  const plan = schedule(ready.map(({ ready: r }) => ({ kind: r.tool.kind, targets: r.targets })));
  await executePlan(
    plan,
    async (position) => {
      const entry = ready[position];
      if (entry) messages[entry.index] = await runOne(agent, input, entry.ready, clock, signal, send);
    },
    { maxConcurrency: agent.maxToolConcurrency, signal },
  );
  if (signal.aborted) throw new AbortedError();
  return messages;
}

/** Checks one call; returns the reason it cannot run, or the call ready to run. */
function check(agent: ResolvedAgent, call: ToolCall): ReadyCall | string {
  const tool = agent.tools.get(call.name);
  if (!tool) {
    const known = [...agent.tools.keys()];
    return `Unknown tool "${call.name}". ${known.length ? `Available tools: ${known.join(', ')}.` : 'This agent has no tools.'}`;
  }
  let raw: unknown;
  try {
    raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (error) {
    return `The arguments of "${call.name}" are not valid JSON (${errorMessage(error)}). Send one JSON object that matches the tool's parameters.`;
  }
  const parsed = tool.parameters.safeParse(raw);
  if (!parsed.success) {
    return `The arguments of "${call.name}" do not match its parameters:\n${z.prettifyError(parsed.error)}`;
  }
  let targets: readonly string[] | undefined;
  try {
    targets = tool.targets?.(parsed.data);
  } catch {
    targets = undefined; // unknown targets: the planner treats the call as touching everything
  }
  return { call, tool, args: parsed.data, targets };
}

async function runOne(
  agent: ResolvedAgent,
  input: RunToolsInput,
  { call, tool, args }: ReadyCall,
  clock: Clock,
  signal: AbortSignal,
  send: (event: ToolProgress) => void,
): Promise<ToolMessage> {
  const started = clockNow(clock);
  send({ type: 'TOOL.STARTED', callId: call.id, tool: call.name, arguments: call.arguments });
  if (tool.interactive) send({ type: 'TOOL.WAITING', callId: call.id });
  const callController = new AbortController();
  const stop = () => callController.abort(signal.reason);
  signal.addEventListener('abort', stop, { once: true });
  const limits: Promise<never>[] = [aborted(callController.signal)];
  if (tool.timeoutMs !== undefined) {
    limits.push(
      sleep(clock, tool.timeoutMs, callController.signal).then(() => {
        const timeout = new ToolTimeoutError(tool.name, tool.timeoutMs ?? 0);
        callController.abort(timeout);
        throw timeout;
      }),
    );
  }
  let message: ToolMessage;
  try {
    const output = await Promise.race([
      Promise.resolve().then(() =>
        tool.execute(args as never, {
          agentId: input.agentId,
          agentName: agent.name,
          toolCallId: call.id,
          signal: callController.signal,
          clock,
        }),
      ),
      ...limits,
    ]);
    message = { role: 'tool', toolCallId: call.id, content: render(output) };
    send({ type: 'TOOL.ENDED', callId: call.id, tool: call.name, status: 'ok', durationMs: clockNow(clock) - started });
  } catch (error) {
    const text = errorMessage(error);
    message = { role: 'tool', toolCallId: call.id, content: `Error: ${text}`, isError: true };
    send({
      type: 'TOOL.ENDED',
      callId: call.id,
      tool: call.name,
      status: 'error',
      durationMs: clockNow(clock) - started,
      error: text,
    });
  } finally {
    signal.removeEventListener('abort', stop);
    if (!callController.signal.aborted) callController.abort(new AbortedError('The tool call ended.'));
    if (tool.interactive) send({ type: 'TOOL.RESUMED', callId: call.id });
  }
  return message;
}

/** A promise that rejects when the signal aborts (with its reason), and never resolves. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(signal.reason instanceof Error ? signal.reason : new AbortedError());
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

function render(output: unknown): string {
  if (typeof output === 'string') return output;
  if (output === undefined) return '';
  try {
    return JSON.stringify(output) ?? String(output);
  } catch {
    return String(output);
  }
}
