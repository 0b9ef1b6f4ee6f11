// A reply awaited from a topic: any subscriber may answer, so one subscriber that ends does not end the wait.
import { describe, expect, it } from 'vitest';
import { createRuntime } from 'troupe';
import { callTools, toolCall } from 'troupe/testing';
import { lastMessage, readMessages, resident, scriptedPerAgent, simulatedClock, toolMessageFor, worker } from '../stubs.js';

describe('send_message with expect_reply to a topic', () => {
  it('waits on when the first subscriber ends without replying, and takes the reply of another', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        quitter: ['waiting', callTools(toolCall('finish', { answer: 'gone' }, 'f1'))],
        answerer: ['waiting', callTools(toolCall('reply', { content: 'yes' }, 'r1')), 'replied'],
        asker: [callTools(toolCall('send_message', { to: 'topic:q', content: 'anyone?', expect_reply: true }, 's1')), 'done'],
      },
      // The quitter ends before the answerer, slower, replies.
      { latencyMs: (request) => (request.agentName === 'answerer' ? 500 : 50) },
    );
    const agents = [resident('quitter', ['finish'], { subscribe: ['q'] }), resident('answerer', ['reply'], { subscribe: ['q'] }), worker('asker', ['send_message'])];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const quitter = runtime.spawn('quitter', 'Wait.');
    const answerer = runtime.spawn('answerer', 'Wait.');
    await runtime.runUntilIdle();
    const asker = runtime.run('asker', 'Ask the topic.');
    await runtime.runUntilIdle();

    expect(await quitter.result).toMatchObject({ status: 'completed', output: 'gone' });
    expect(await asker).toMatchObject({ status: 'completed', output: 'done' });
    const last = model.calls.filter((request) => request.agentName === 'asker').at(-1)!;
    const result = toolMessageFor(last, 's1');
    expect(result?.content).not.toMatch(/^Error/);
    expect(readMessages(result!.content)).toEqual([expect.objectContaining({ from: answerer.id, content: 'yes' })]);
    expect(lastMessage(last).role).toBe('tool');
    runtime.stop(answerer.id);
    await runtime.shutdown();
  });
});
