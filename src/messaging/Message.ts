import { z } from 'zod';

/** The address of code outside any agent: messages from `runtime.send`, replies to `runtime.request`. */
export const RUNTIME_ADDRESS = 'runtime';

/** The prefix of a topic address: `topic:prices` reaches every subscriber of `prices`. */
export const TOPIC_PREFIX = 'topic:';

/** A topic name: 1–128 printable characters without spaces, such as `prices` or `market.orders`. */
export const TopicName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/, 'must be 1-128 letters, digits, ".", "_", ":", "/" or "-", starting with a letter or digit');

/**
 * One message between agents (or between code and an agent). Plain JSON, so it can be logged, replayed or sent to
 * another process as it is.
 *
 * - `from`: the sender's agent id, or `runtime` for code.
 * - `to`: where it was sent: an agent id (`agent:judge:x1`), an agent name (`judge`: its one live instance), a topic
 *   (`topic:prices`) or `runtime`. A copy delivered to one subscriber of a topic has that agent's id here and the
 *   topic in `topic`.
 * - `replyTo`: the id of the message this one answers.
 * - `sentAt`: milliseconds on the runtime's clock.
 */
export const Message = z.object({
  id: z.string().min(1),
  from: z.string().min(1),
  to: z.string().min(1),
  topic: TopicName.optional(),
  content: z.string(),
  replyTo: z.string().min(1).optional(),
  sentAt: z.number(),
});
/** One message between agents (or between code and an agent). */
export type Message = z.infer<typeof Message>;

/** True for a topic name as `subscribe` takes it: a {@link TopicName} that is not a topic's address (`topic:news`). */
export function isTopicName(topic: string): boolean {
  return !topic.startsWith(TOPIC_PREFIX) && TopicName.safeParse(topic).success;
}

/** True for an address that names a topic. */
export function isTopicAddress(address: string): boolean {
  return address.startsWith(TOPIC_PREFIX);
}

/** The name of the agent behind an id such as `agent:judge:x1` (or the address itself when it is a name). */
export function agentNameOf(address: string): string {
  if (!address.startsWith('agent:')) return address;
  const end = address.indexOf(':', 6);
  return end < 0 ? address.slice(6) : address.slice(6, end);
}

/**
 * A message as the receiving agent's model reads it: a user message that says who sent it, on which topic, and
 * which message it answers, then the content.
 *
 * @example
 * renderMessage({ id: 'm3', from: 'agent:alice:x1', to: 'agent:bob:y2', content: 'Hi', sentAt: 0 })
 * // '[message m3 from agent:alice:x1] Hi'
 */
export function renderMessage(message: Message): string {
  const on = message.topic === undefined ? '' : ` on topic ${message.topic}`;
  const answers = message.replyTo === undefined ? '' : ` in reply to ${message.replyTo}`;
  return `[message ${message.id} from ${message.from}${on}${answers}] ${message.content}`;
}
