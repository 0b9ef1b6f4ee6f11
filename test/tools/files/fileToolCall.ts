// Runs a file tool's call as the runtime would give it (arguments parsed by the tool's schema), on a real folder.
import { fileTools, isToolReply, Workspace, type Tool, type ToolContext } from 'troupe';

/** What the model would see of a call: its text, and whether it is an error. */
export interface Seen {
  text: string;
  isError: boolean;
  /** The error thrown, for a call that threw. */
  error?: unknown;
}

/** The file tools rooted at a folder (or with no workspace), by name. */
export function toolsAt(folder: string | undefined): Record<string, Tool> {
  const tools = fileTools(folder === undefined ? undefined : Workspace.open(folder));
  return Object.fromEntries(tools.map((tool) => [tool.name, tool]));
}

/** Calls a tool with arguments as the model wrote them; a throw becomes an error result, as in runTools. */
export async function call(tool: Tool, args: Record<string, unknown>): Promise<Seen> {
  const parsed = tool.parameters.parse(args);
  const context = { signal: new AbortController().signal } as ToolContext;
  try {
    const output = await tool.execute(parsed, context);
    if (isToolReply(output)) return { text: output.content, isError: output.isError };
    return { text: String(output), isError: false };
  } catch (error) {
    return { text: error instanceof Error ? error.message : String(error), isError: true, error };
  }
}
