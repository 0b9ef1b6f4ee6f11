// how resident agents end.
import { describe, expect, it } from 'vitest';
import { createRuntime } from 'troupe';
import { callTools, toolCall } from 'troupe/testing';
import { resident, scripted, simulatedClock } from '../stubs.js';

describe('resident endings', () => {
  it('a resident that calls finish with an empty answer ends with its last answer (it had given one)', async () => {
    const clock = simulatedClock();
    const model = scripted(['first answer', callTools(toolCall('finish', { answer: '' }, 'f'))]);
    const runtime = createRuntime({ model, agents: [resident('echo', ['finish'])], clock, projectAgentDir: false });
    const echo = runtime.spawn('echo', 'Answer, then finish on the next message.');
    await runtime.runUntilIdle();
    await runtime.send(echo.id, 'Please finish.');
    await runtime.runUntilIdle();
    expect(await echo.result).toMatchObject({ status: 'completed', output: 'first answer' });
    await runtime.shutdown();
  });
});
