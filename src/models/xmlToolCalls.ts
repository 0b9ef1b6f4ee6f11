/**
 * Tool calling as plain text, for models without native tool calling (many local models on Ollama or vLLM).
 *
 * The convention, which {@link describeToolsForXml} teaches the model in the system prompt:
 *
 * - The model calls a tool by writing a block `<tool_call name="tool_name">{"arg": 1}</tool_call>` whose body is
 *   the JSON arguments object. It may write several blocks in one reply, with or without text around them.
 * - Earlier calls are shown back to the model in that same form, in the text of its assistant messages.
 * - Each tool result comes back as a user message holding one block per result:
 *   `<tool_result id="call_1" name="tool_name">…</tool_result>`, with `error="true"` when the call failed.
 *   Results of consecutive tool messages share one user message, so user and assistant turns still alternate.
 *
 * Everything here is a pure function of its input.
 */
import type { ChatMessage, ToolCall, ToolSchema } from './Model.js';

/** What {@link parseXmlToolCalls} found in a reply. */
export interface ParsedXmlToolCalls {
  /** The reply text with every tool call block removed, trimmed. */
  content: string;
  /** The calls, in the order the model wrote them. */
  toolCalls: ToolCall[];
}

/** Options of {@link parseXmlToolCalls}. */
export interface ParseXmlToolCallsOptions {
  /** Makes the id of the call at `index` (0-based); ids must be unique within the reply. Default `call_${index + 1}`. */
  makeId?: (index: number) => string;
}

/** A tool result to show the model, in {@link formatXmlToolResult}. */
export interface XmlToolResult {
  /** The id of the call this result answers. */
  id: string;
  /** The name of the tool that was called ('' when unknown). */
  name: string;
  /** The result text, or the error the model should see. */
  content: string;
  /** True when the call failed. */
  isError?: boolean;
}

/**
 * One `<tool_call …>…</tool_call>` block. A block that was never closed runs to the next block or to the end of
 * the text (group 3 is then undefined).
 */
const BLOCK = /<\s*tool_call\b([^>]*)>([\s\S]*?)(?:(<\/\s*tool_call\s*>)|(?=<\s*tool_call\b)|$)/gi;
/** The `name` attribute, in double or single quotes, or unquoted. */
const NAME_ATTRIBUTE = /\bname\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i;

/**
 * Finds the tool calls in a reply written in the XML convention. It never throws: the arguments are kept as the
 * model wrote them (only trimmed; an empty body becomes `{}`), so invalid JSON reaches the runtime, which answers
 * the model with an error result. A closed block without a `name` attribute gives a call named `''`, which the
 * runtime answers as an unknown tool. Name attributes may use double or single quotes (or none); whitespace and
 * letter case of the tags are free; a named block that was never closed (the model stopped early) runs to the next
 * block or the end of the text.
 *
 * @example
 * parseXmlToolCalls('Looking.\n<tool_call name="search">{"q": "otters"}</tool_call>')
 * // → { content: 'Looking.', toolCalls: [{ id: 'call_1', name: 'search', arguments: '{"q": "otters"}' }] }
 */
export function parseXmlToolCalls(text: string, options: ParseXmlToolCallsOptions = {}): ParsedXmlToolCalls {
  const makeId = options.makeId ?? ((index: number) => `call_${index + 1}`);
  const toolCalls: ToolCall[] = [];
  const content = text.replace(BLOCK, (block: string, attributes: string, body: string, closing?: string) => {
    const name = NAME_ATTRIBUTE.exec(attributes);
    // A bare, unclosed `<tool_call>` is more likely a mention of the convention than a call.
    if (name === null && closing === undefined) return block;
    const args = body.trim();
    toolCalls.push({
      id: makeId(toolCalls.length),
      name: (name?.[1] ?? name?.[2] ?? name?.[3] ?? '').trim(),
      arguments: args === '' ? '{}' : args,
    });
    return '';
  });
  return { content: toolCalls.length === 0 ? text.trim() : tidy(content), toolCalls };
}

/** Removes the blank lines that removed blocks leave behind. */
function tidy(text: string): string {
  return text.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

/**
 * The text that teaches a model the XML convention: every tool's name, description and JSON schema of its
 * parameters, and the exact form of a call. Meant to be appended to the system prompt.
 */
export function describeToolsForXml(tools: readonly ToolSchema[]): string {
  const described = tools.map(
    (tool) =>
      `### ${tool.name}\n${tool.description.trim()}\nParameters (JSON schema):\n${JSON.stringify(tool.parameters)}`,
  );
  return [
    '# Tools',
    'You can call the tools below. To call one, write a block in exactly this form, with the arguments as one JSON object:',
    '<tool_call name="tool_name">{"arg": 1}</tool_call>',
    'Write one block per call; you may write several blocks in one reply. After your reply, each result comes back ' +
      'in a message as <tool_result id="…" name="tool_name">…</tool_result> (with error="true" when the call ' +
      'failed). When you need no more tools, answer in plain text without any <tool_call> block.',
    '',
    '## Available tools',
    '',
    described.join('\n\n'),
  ].join('\n');
}

/** One call in the XML convention, as a model would write it: `<tool_call name="…">arguments</tool_call>`. */
export function formatXmlToolCall(call: Pick<ToolCall, 'name' | 'arguments'>): string {
  return `<tool_call name="${escapeAttribute(call.name)}">${call.arguments}</tool_call>`;
}

/** One tool result in the XML convention: `<tool_result id="…" name="…">content</tool_result>`. */
export function formatXmlToolResult(result: XmlToolResult): string {
  const error = result.isError === true ? ' error="true"' : '';
  return `<tool_result id="${escapeAttribute(result.id)}" name="${escapeAttribute(result.name)}"${error}>${result.content}</tool_result>`;
}

/**
 * Rewrites a conversation for a model without native tool calling: the tool descriptions are appended to the
 * first system message (or added as a new first system message), assistant tool calls become XML blocks after the
 * assistant's text, and tool messages become user messages of `<tool_result>` blocks (consecutive results share
 * one message). The result holds only system, user and assistant messages without `toolCalls`.
 */
export function toXmlConversation(messages: readonly ChatMessage[], tools: readonly ToolSchema[]): ChatMessage[] {
  const names = new Map<string, string>();
  const out: ChatMessage[] = [];
  let pendingResults: string[] = [];
  const flushResults = () => {
    if (pendingResults.length === 0) return;
    out.push({ role: 'user', content: pendingResults.join('\n') });
    pendingResults = [];
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      pendingResults.push(
        formatXmlToolResult({
          id: message.toolCallId,
          name: names.get(message.toolCallId) ?? '',
          content: message.content,
          isError: message.isError,
        }),
      );
      continue;
    }
    flushResults();
    if (message.role === 'assistant' && message.toolCalls !== undefined && message.toolCalls.length > 0) {
      for (const call of message.toolCalls) names.set(call.id, call.name);
      const blocks = message.toolCalls.map(formatXmlToolCall).join('\n');
      out.push({ role: 'assistant', content: message.content.trim() === '' ? blocks : `${message.content}\n${blocks}` });
    } else if (message.role === 'assistant') {
      out.push({ role: 'assistant', content: message.content });
    } else {
      out.push(message);
    }
  }
  flushResults();
  return tools.length === 0 ? out : withToolDescriptions(out, describeToolsForXml(tools));
}

function withToolDescriptions(messages: ChatMessage[], description: string): ChatMessage[] {
  const index = messages.findIndex((message) => message.role === 'system');
  const system = messages[index];
  if (index === -1 || system === undefined) return [{ role: 'system', content: description }, ...messages];
  const copy = [...messages];
  copy[index] = { role: 'system', content: system.content.trim() === '' ? description : `${system.content}\n\n${description}` };
  return copy;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
