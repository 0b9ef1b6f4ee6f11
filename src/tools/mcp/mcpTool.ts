import { z } from 'zod';
import { ContentBlockSchema, type ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../../errors.js';
import type { Tool, ToolKind } from '../defineTool.js';
import type { PlannedCall } from '../schedule.js';
import { toolReply, type ToolReply } from '../toolReply.js';
import type { McpCallAnswer, McpConnection, McpToolInfo } from './McpConnection.js';
import { DEFAULT_MCP_RESULT_CHARS } from './McpServerConfig.js';

/**
 * The arguments of an MCP tool as troupe checks them: any JSON object, passed to the server as it is. The server
 * checks them against its own schema (the MCP specification asks servers to), and its refusal comes back as an
 * error result the model sees; a call whose arguments are not JSON or not an object never reaches it.
 */
const McpArguments = z.looseObject({});

/** The name troupe gives a server's tool: `server:tool`. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}:${tool}`;
}

/**
 * A server's tool as a troupe tool named `server:tool`: the model is offered the server's description and JSON schema
 * as they are (less a top-level `$schema`, which only names the dialect). A tool whose annotations say `readOnlyHint`
 * is a `read` tool for the planner (and safe to call again after a resume); any other is a `write` tool with unknown
 * targets, as MCP's own default assumes a tool may change its world.
 */
export function mcpTool(connection: McpConnection, info: McpToolInfo): Tool {
  const name = mcpToolName(connection.name, info.name);
  const readOnly = info.annotations?.readOnlyHint === true;
  const kind: ToolKind = readOnly ? 'read' : 'write';
  const planned: PlannedCall = Object.freeze({ kind });
  const description = info.description?.trim() || info.title?.trim() || `The tool "${info.name}" of the MCP server "${connection.name}".`;
  const { $schema: _dialect, ...parameters } = info.inputSchema as Record<string, unknown>;
  return Object.freeze({
    name,
    description,
    parameters: McpArguments,
    kind,
    category: 'mcp',
    idempotent: readOnly || info.annotations?.idempotentHint === true,
    schema: Object.freeze({ name, description, parameters }),
    plan: () => planned,
    execute: async (args: Record<string, unknown>, context: { signal: AbortSignal }) =>
      mcpReply(await connection.call(info.name, args, context.signal), connection.config.maxResultChars),
  }) as Tool;
}

/**
 * A tool that a server which is not available would have given (it failed to start or died before listing it), or
 * that it listed with an entry that is not valid: each call is an error result that says why. A `read`, so it holds
 * up no other call.
 */
export function unavailableMcpTool(connection: McpConnection, tool: string): Tool {
  const name = mcpToolName(connection.name, tool);
  const planned: PlannedCall = Object.freeze({ kind: 'read' });
  const description = `The tool "${tool}" of the MCP server "${connection.name}", which is not available.`;
  return Object.freeze({
    name,
    description,
    parameters: McpArguments,
    kind: 'read',
    category: 'mcp',
    schema: Object.freeze({ name, description, parameters: { type: 'object' } }),
    plan: () => planned,
    execute: () => {
      throw new ToolError(connection.unavailable(tool) ?? `MCP server "${connection.name}" has no tool "${tool}".`, name);
    },
  }) as Tool;
}

/**
 * What the model sees of a server's answer: its text blocks (and the text of embedded resources) one after another,
 * a line naming each image, audio clip or link, a block of a type MCP does not define (or not well formed) as its JSON,
 * or its structured content as JSON when it sent no blocks. An answer with `isError` is an error result; structured
 * content is kept as the tool message's metadata. A text longer than `maxChars` is cut there, with a line that says
 * how long it was (a server's page or listing would otherwise fill the conversation, the events and the session).
 */
export function mcpReply(result: McpCallAnswer, maxChars = DEFAULT_MCP_RESULT_CHARS): ToolReply {
  const parts = result.content.map((block) => {
    const known = ContentBlockSchema.safeParse(block);
    return known.success ? describeBlock(known.data) : JSON.stringify(block);
  });
  const { structuredContent } = result;
  const whole = parts.length > 0 ? parts.join('\n') : structuredContent === undefined ? '' : JSON.stringify(structuredContent);
  const content = whole.length <= maxChars ? whole : cutAnswer(whole, maxChars);
  return toolReply({
    content,
    isError: result.isError === true,
    ...(structuredContent === undefined ? {} : { metadata: { structuredContent } }),
  });
}

/**
 * The first `maxChars` characters of an answer and a line that says how long it was. The cut does not fall between the
 * two halves of a character beyond U+FFFF (an emoji, a CJK extension): a lone half is not text, and a model's API may
 * refuse the request that carries it.
 */
function cutAnswer(whole: string, maxChars: number): string {
  const last = whole.charCodeAt(maxChars - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? maxChars - 1 : maxChars;
  return `${whole.slice(0, end)}\n[cut: the answer had ${whole.length.toLocaleString('en-US')} characters; the first ${end.toLocaleString('en-US')} are shown (the server's maxResultChars)]`;
}

function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`;
    case 'resource':
      return 'text' in block.resource && typeof block.resource.text === 'string'
        ? block.resource.text
        : `[resource: ${block.resource.uri}${block.resource.mimeType ? ` (${block.resource.mimeType})` : ''}]`;
    case 'resource_link':
      return `[resource link: ${block.uri}${block.name ? ` (${block.name})` : ''}]`;
    default:
      return JSON.stringify(block);
  }
}
