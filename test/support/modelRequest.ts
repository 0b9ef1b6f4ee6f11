// Builds a ModelRequest for model tests: an agent identity, a simulated clock (unused by HTTP models) and a signal.
import { SimulatedClock } from 'xstate';
import type { ChatMessage, ModelRequest, ToolSchema } from '../../src/models/Model.js';

/** A tool schema the model tests offer. */
export const searchTool: ToolSchema = {
  name: 'search',
  description: 'Searches the web.',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
};

/** A request with sensible defaults; anything given replaces them. */
export function modelRequest(overrides: Partial<ModelRequest> = {}): ModelRequest {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Hello?' },
  ];
  return {
    agentId: 'agent:tester:abc',
    agentName: 'tester',
    messages,
    tools: [],
    signal: new AbortController().signal,
    clock: new SimulatedClock(),
    ...overrides,
  };
}
