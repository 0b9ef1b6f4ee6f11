// requiredToolCalls: an agent that answers (or calls finish) before it called the tools it must is told which are
// missing and goes on; if its turns run out first, it fails with required_tools.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, InvalidAgentError, type ModelRequest } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { parseAgentFile } from '../../src/catalog/parseAgentFile.js';
import { resident, scripted, simulatedClock } from '../stubs.js';

/** A `write_report` tool that fails when asked to (`fail: true`), and the reports it wrote. */
function reportTool() {
  const written: string[] = [];
  const tool = defineTool({
    name: 'write_report',
    description: 'Writes the report.',
    kind: 'write',
    parameters: z.object({ text: z.string(), fail: z.boolean().optional() }),
    execute: ({ text, fail }) => {
      if (fail) throw new Error('The disk is full.');
      written.push(text);
      return 'Written.';
    },
  });
  return { tool, written };
}

function reporter(maxTurns = 5) {
  return defineAgent({ name: 'reporter', description: 'Reports.', systemPrompt: 'Write a report.', tools: ['write_report'], requiredToolCalls: ['write_report'], maxTurns });
}

const lastMessage = (request: ModelRequest) => request.messages[request.messages.length - 1]!;

describe('requiredToolCalls', () => {
  it('tells an agent that answers too early which tools are missing, and takes its answer once it called them', async () => {
    const { tool, written } = reportTool();
    const model = scripted(['All done.', callTools(toolCall('write_report', { text: 'Q3 is up.' })), 'Report written: Q3 is up.']);
    const runtime = createRuntime({ model, agents: [reporter()], tools: [tool], projectAgentDir: false });

    const result = await runtime.run('reporter', 'Report on Q3.');

    expect(result).toMatchObject({ status: 'completed', output: 'Report written: Q3 is up.' });
    expect(written).toEqual(['Q3 is up.']);
    // The early answer stays in the conversation, followed by the reminder the model reads next.
    const second = model.calls[1]!;
    expect(second.messages.at(-2)).toMatchObject({ role: 'assistant', content: 'All done.' });
    expect(lastMessage(second)).toMatchObject({ role: 'user' });
    expect(lastMessage(second).content).toContain('`write_report`');
    await runtime.shutdown();
  });

  it('does not count a call of the required tool that ended with an error', async () => {
    const { tool, written } = reportTool();
    const model = scripted([
      callTools(toolCall('write_report', { text: 'x', fail: true })),
      'Done.',
      callTools(toolCall('write_report', { text: 'y' })),
      'Done now.',
    ]);
    const runtime = createRuntime({ model, agents: [reporter()], tools: [tool], projectAgentDir: false });

    const result = await runtime.run('reporter', 'Report.');

    expect(result).toMatchObject({ status: 'completed', output: 'Done now.' });
    expect(written).toEqual(['y']);
    expect(lastMessage(model.calls[2]!).content).toContain('have not called `write_report`');
    await runtime.shutdown();
  });

  it('fails with required_tools when its turns run out before it called them', async () => {
    const { tool } = reportTool();
    const model = scripted(['Done.', 'Really done.']);
    const runtime = createRuntime({ model, agents: [reporter(2)], tools: [tool], projectAgentDir: false });
    const failed: unknown[] = [];
    runtime.events$.subscribe((event) => event.type === 'agent.failed' && failed.push(event));

    const result = await runtime.run('reporter', 'Report.');

    expect(result.status).toBe('failed');
    expect(result.reason).toBe('required_tools');
    expect(result.error).toMatchObject({ code: 'required_tools', fault: 'model' });
    expect(result.error?.message).toContain('write_report');
    expect(failed).toMatchObject([{ reason: 'required_tools', error: { code: 'required_tools' } }]);
    await runtime.shutdown();
  });

  it('does not let an agent finish before it called them: finish is answered with the reminder', async () => {
    const { tool, written } = reportTool();
    const clock = simulatedClock();
    const model = new ScriptedModel([
      callTools(toolCall('finish', { answer: 'Nothing to report.' }, 'f1')),
      callTools(toolCall('write_report', { text: 'All quiet.' }, 'w1'), toolCall('finish', { answer: 'Reported.' }, 'f2')),
    ]);
    const agent = defineAgent({ ...resident('watcher', ['write_report', 'finish']), requiredToolCalls: ['write_report'] });
    const runtime = createRuntime({ model, agents: [agent], tools: [tool], clock, projectAgentDir: false });

    const watcher = runtime.spawn('watcher', 'Watch, report, finish.');
    await runtime.runUntilIdle();

    expect(await watcher.result).toMatchObject({ status: 'completed', output: 'Reported.' });
    expect(written).toEqual(['All quiet.']);
    expect(lastMessage(model.calls[1]!).content).toContain('You called finish, but you have not called `write_report`');
    await runtime.shutdown();
  });

  it('refuses a definition that requires a tool the agent does not have, and reads the field from an agent file', () => {
    expect(() =>
      defineAgent({ name: 'a', description: 'A.', systemPrompt: 'A.', tools: ['read_file'], requiredToolCalls: ['write_report'] }),
    ).toThrow(InvalidAgentError);
    expect(() => defineAgent({ name: 'a', description: 'A.', systemPrompt: 'A.', tools: ['docs:*'], requiredToolCalls: ['docs:search'] })).not.toThrow();
    // A server in mcpServers gives the agent all of its tools, as `server:*` in tools does.
    expect(() => defineAgent({ name: 'a', description: 'A.', systemPrompt: 'A.', mcpServers: { docs: { command: 'x' } }, requiredToolCalls: ['docs:search'] })).not.toThrow();
    expect(() => defineAgent({ name: 'a', description: 'A.', systemPrompt: 'A.', mcpServers: ['docs'], requiredToolCalls: ['docs:search'] })).not.toThrow();
    expect(() => defineAgent({ name: 'a', description: 'A.', systemPrompt: 'A.', mcpServers: ['docs'], requiredToolCalls: ['web:search'] })).toThrow(InvalidAgentError);
    // Without tools an agent is offered none, so a required tool could never be called.
    expect(() => defineAgent({ name: 'a', description: 'A.', systemPrompt: 'A.', requiredToolCalls: ['write_report'] })).toThrow(/requiredToolCalls names write_report, which is not among its tools/);
    const parsed = parseAgentFile(
      'reporter.md',
      '---\nname: reporter\ndescription: Reports.\ntools: write_report, read_file\nrequiredToolCalls: write_report\n---\nWrite a report.\n',
    );
    expect(parsed.requiredToolCalls).toEqual(['write_report']);
  });
});
