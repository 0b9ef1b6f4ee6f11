import { z } from 'zod';
import type { MessageReceipt } from '../messaging/Messaging.js';
import { defineTool, type Tool } from './defineTool.js';
import { isToolSignal } from './toolSignal.js';

const timeoutMs = z.number().int().positive().optional();

/** `send_message`: a message to an agent (id or name) or `topic:<name>`; with `expect_reply`, the result is the reply. */
export const sendMessage = defineTool({
  name: 'send_message',
  description:
    'Sends a message to another agent (by its id, or by its name when one agent of that name is running) or to a ' +
    'topic ("topic:<name>"). With expect_reply the result is the reply, or an error when none comes within timeout_ms.',
  parameters: z.object({
    to: z.string().min(1).describe('An agent id (agent:<name>:<key>), an agent name, or topic:<name>.'),
    content: z.string().describe('The message.'),
    expect_reply: z.boolean().optional().describe('Wait for the reply and return it.'),
    timeout_ms: timeoutMs.describe('How long to wait for the reply, in milliseconds (default: no limit).'),
  }),
  kind: 'other',
  execute: async ({ to, content, expect_reply, timeout_ms }, { messaging }) => {
    // A time limit without a wait would be dropped without a word: the model meant to wait for the reply.
    if (timeout_ms !== undefined && expect_reply !== true) {
      throw new Error('timeout_ms is how long to wait for the reply: send with expect_reply: true to wait, or without timeout_ms. The message was not sent.');
    }
    const sent = await messaging.send(to, content, { expectReply: expect_reply, timeoutMs: timeout_ms });
    return isToolSignal(sent) ? sent : describeReceipt(sent);
  },
});

/** `reply`: answers the message the agent read last, or the one named. */
export const reply = defineTool({
  name: 'reply',
  description: 'Replies to the message you read last (or to the one whose id you give), to its sender.',
  parameters: z.object({
    content: z.string().describe('The reply.'),
    message_id: z.string().min(1).optional().describe('The id of the message to answer (default: the last one you read).'),
  }),
  kind: 'other',
  execute: async ({ content, message_id }, { messaging }) => describeReceipt(await messaging.reply(content, message_id)),
});

/** `wait_for_messages`: the agent waits until a message comes (or `timeout_ms` passes); the result is the messages. */
export const waitForMessages = defineTool({
  name: 'wait_for_messages',
  description:
    'Waits until a message comes (only from one agent, with from) or timeout_ms passes, and returns the messages. ' +
    'With collect, waits the whole timeout_ms and returns every message that came.',
  parameters: z.object({
    timeout_ms: timeoutMs.describe('How long to wait, in milliseconds (default: no limit).'),
    from: z.string().min(1).optional().describe('Only a message from this agent (id or name).'),
    collect: z.boolean().optional().describe('Wait the whole timeout_ms and return everything that came.'),
  }),
  kind: 'other',
  execute: ({ timeout_ms, from, collect }, { messaging }) =>
    // Fields left undefined rather than spread in: every turn of a waiting agent makes one.
    messaging.waitForMessages({ timeoutMs: timeout_ms, from, collect }),
});

/** `publish`: a message to every subscriber of a topic. */
export const publish = defineTool({
  name: 'publish',
  description: 'Publishes a message to every agent subscribed to a topic (you do not get your own message).',
  parameters: z.object({ topic: z.string().min(1).describe('The topic name.'), content: z.string().describe('The message.') }),
  kind: 'other',
  execute: ({ topic, content }, { messaging }) => messaging.publish(topic, content).then(describeReceipt),
});

/** `subscribe`: the agent gets every later message published to a topic. */
export const subscribe = defineTool({
  name: 'subscribe',
  description: 'Subscribes you to a topic: every message published to it from now on reaches you.',
  parameters: z.object({ topic: z.string().min(1).describe('The topic name.') }),
  kind: 'other',
  execute: ({ topic }, { messaging }) => {
    messaging.subscribe(topic);
    return `Subscribed to ${topic}.`;
  },
});

/** `finish`: ends the agent after this turn's tool calls, with its answer. */
export const finish = defineTool({
  name: 'finish',
  description: 'Ends your work: your answer (or your last answer, if you give none) becomes your result.',
  parameters: z.object({ answer: z.string().optional().describe('Your final answer.') }),
  kind: 'other',
  execute: ({ answer }, { messaging }) => messaging.finish(answer),
});

/** `stop_agent`: stops one of the caller's own sub-agents (it completes with its last answer). */
export const stopAgent = defineTool({
  name: 'stop_agent',
  description: 'Stops one of your own sub-agents; it ends with its last answer.',
  parameters: z.object({ agent_id: z.string().min(1).describe('The id of the sub-agent to stop.') }),
  kind: 'other',
  execute: ({ agent_id }, { messaging }) => {
    messaging.stop(agent_id);
    return `Asked ${agent_id} to stop.`;
  },
});

/** `blackboard_read`: a value (or every key) of the run's shared blackboard. */
export const blackboardRead = defineTool({
  name: 'blackboard_read',
  description: 'Reads a key of the shared blackboard (or, without a key, lists every key).',
  parameters: z.object({ key: z.string().min(1).optional().describe('The key to read.') }),
  kind: 'read',
  // Keys are targets in a namespace of their own, so a key never overlaps a file of the same name.
  targets: ({ key }) => (key === undefined ? [] : [`blackboard:${key}`]),
  execute: ({ key }, { blackboard }) => {
    if (key === undefined) return { keys: blackboard.keys() };
    return blackboard.has(key) ? { key, value: blackboard.get(key) ?? null } : `The key "${key}" is not set.`;
  },
});

/** `blackboard_write`: writes a JSON value under a key of the run's shared blackboard. */
export const blackboardWrite = defineTool({
  name: 'blackboard_write',
  description: 'Writes a JSON value under a key of the shared blackboard, for every agent of the run to read.',
  parameters: z.object({ key: z.string().min(1).describe('The key.'), value: z.json().describe('Any JSON value.') }),
  kind: 'write',
  category: 'db_op',
  targets: ({ key }) => [`blackboard:${key}`],
  execute: ({ key, value }, { agentId, blackboard }) => {
    blackboard.set(key, value, agentId);
    return `Wrote ${key}.`;
  },
});

/** The built-in messaging and blackboard tools. */
export const messagingTools: readonly Tool[] = Object.freeze([
  sendMessage,
  reply,
  waitForMessages,
  publish,
  subscribe,
  finish,
  stopAgent,
  blackboardRead,
  blackboardWrite,
] as Tool[]);

function describeReceipt(receipt: MessageReceipt): string {
  const reached = receipt.deliveredTo.length;
  let text = reached === 0 ? `Message ${receipt.id} reached nobody.` : `Message ${receipt.id} delivered to ${reached === 1 ? receipt.deliveredTo[0] : `${reached} agents`}.`;
  if (receipt.refusedBy.length > 0) text += ` ${receipt.refusedBy.length} full inbox(es) refused it: ${receipt.refusedBy.join(', ')}.`;
  if (receipt.dropped.length > 0) text += ` ${receipt.dropped.length} older message(s) were dropped to make room.`;
  return text;
}
