import type { ChatMessage } from '../models/Model.js';

/**
 * The part of a caller's conversation a sub-agent with `shareContext` starts from: everything but the system
 * prompt, or only the last `lastN` messages. The caller's unanswered tool calls (the delegation itself) are left
 * out, and so are tool messages cut off from the call they answer, so the result is a conversation any
 * OpenAI-compatible server accepts.
 */
export function sharedContext(messages: readonly ChatMessage[], lastN?: number): ChatMessage[] {
  let shared = messages.filter((message) => message.role !== 'system');
  const last = shared[shared.length - 1];
  if (last?.role === 'assistant' && (last.toolCalls?.length ?? 0) > 0) {
    shared = shared.slice(0, -1);
    if (last.content.trim() !== '') shared.push({ role: 'assistant', content: last.content });
  }
  if (lastN !== undefined) shared = shared.slice(-lastN);
  let start = 0;
  while (shared[start]?.role === 'tool') start += 1;
  return shared.slice(start);
}
