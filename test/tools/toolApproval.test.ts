// Approval for any tool: needsApproval on a tool, a toolPolicy per category or per call, the default that file writes
// ask once a policy is set; the agent waits in waitingForPerson until runtime.approve or runtime.deny.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConfigurationError,
  createRuntime,
  DeadlockError,
  defineTool,
  InvalidToolError,
  UnknownRequestError,
  type ToolApprovalRequest,
} from 'troupe';
import { callTools, toolCall } from 'troupe/testing';
import { collect, lastToolMessage, ofType, scripted, simulatedClock, worker } from '../stubs.js';

/** A `drop_table` tool that asks when told to, and the tables it dropped. */
function dropTable(needsApproval: boolean | ((args: { table: string }) => boolean) = true) {
  const dropped: string[] = [];
  const tool = defineTool({
    name: 'drop_table',
    description: 'Drops a table.',
    parameters: z.object({ table: z.string() }),
    kind: 'write',
    category: 'db_op',
    needsApproval,
    execute: ({ table }) => {
      dropped.push(table);
      return `Dropped ${table}.`;
    },
  });
  return { tool, dropped };
}

/** Runs until everyone waits; the agents that wait for a person are reported as a deadlock, which names them. */
async function waitingAgents(runtime: ReturnType<typeof createRuntime>) {
  const error = await runtime.runUntilIdle().catch((failure: unknown) => failure);
  return error instanceof DeadlockError ? error.waiting : [];
}

describe('approval for any tool', () => {
  it('holds a call of a tool that needs approval, with the agent waiting for a person, and runs it once approved', async () => {
    const { tool, dropped } = dropTable();
    const clock = simulatedClock();
    const model = scripted([callTools(toolCall('drop_table', { table: 'staging' }, 'd1')), (request) => `Result: ${lastToolMessage(request)?.content}`]);
    const runtime = createRuntime({ model, agents: [worker('dba', ['drop_table'])], tools: [tool], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const dba = runtime.spawn('dba', 'Drop the staging table.');

    expect(await waitingAgents(runtime)).toEqual([{ id: dba.id, state: 'running.acting.waitingForPerson' }]);
    expect(dropped).toEqual([]);
    const [request] = ofType(events, 'approval.requested');
    expect(request).toMatchObject({ agentId: dba.id, name: 'dba', tool: 'drop_table', category: 'db_op', callId: 'd1', task: 'drop_table {"table":"staging"}' });
    expect(runtime.pendingApprovals()).toEqual([
      expect.objectContaining({ requestId: request!.requestId, agentId: dba.id, tool: 'drop_table', category: 'db_op', callId: 'd1' }),
    ]);

    runtime.approve(request!.requestId);
    await runtime.runUntilIdle();

    expect(await dba.result).toMatchObject({ status: 'completed', output: 'Result: Dropped staging.' });
    expect(dropped).toEqual(['staging']);
    expect(ofType(events, 'approval.granted')).toMatchObject([{ requestId: request!.requestId, agentId: dba.id }]);
    expect(runtime.pendingApprovals()).toEqual([]);
    expect(() => runtime.approve(request!.requestId)).toThrow(UnknownRequestError);
    await runtime.shutdown();
  });

  it('gives the model an error result with the reason when a person denies the call, and the agent goes on', async () => {
    const { tool, dropped } = dropTable();
    const clock = simulatedClock();
    const model = scripted([callTools(toolCall('drop_table', { table: 'users' }, 'd1')), (request) => `Result: ${lastToolMessage(request)?.content}`]);
    const runtime = createRuntime({ model, agents: [worker('dba', ['drop_table'])], tools: [tool], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const dba = runtime.spawn('dba', 'Drop the users table.');
    await waitingAgents(runtime);

    runtime.deny(runtime.pendingApprovals()[0]!.requestId, 'Users is production data.');
    await runtime.runUntilIdle();

    expect(dropped).toEqual([]);
    const result = await dba.result;
    expect(result.output).toBe('Result: Error: A person denied the call of drop_table: Users is production data.');
    expect(ofType(events, 'tool.denied')).toMatchObject([{ callId: 'd1', reason: 'denied' }]);
    expect(ofType(events, 'tool.result')).toMatchObject([{ callId: 'd1', status: 'error' }]);
    expect(ofType(events, 'approval.denied')).toMatchObject([{ agentId: dba.id, reason: 'Users is production data.' }]);
    await runtime.shutdown();
  });

  it('asks only for the calls a needsApproval function picks, and runs the others at once', async () => {
    const { tool, dropped } = dropTable(({ table }) => !table.startsWith('tmp_'));
    const clock = simulatedClock();
    const model = scripted([callTools(toolCall('drop_table', { table: 'tmp_1' }, 'a'), toolCall('drop_table', { table: 'orders' }, 'b')), 'Done.']);
    const runtime = createRuntime({ model, agents: [worker('dba', ['drop_table'])], tools: [tool], clock, projectAgentDir: false });
    runtime.spawn('dba', 'Clean up.');

    await waitingAgents(runtime);

    expect(dropped).toEqual(['tmp_1']);
    expect(runtime.pendingApprovals().map((approval) => approval.callId)).toEqual(['b']);
    runtime.approve(runtime.pendingApprovals()[0]!.requestId);
    await runtime.runUntilIdle();
    expect(dropped).toEqual(['tmp_1', 'orders']);
    await runtime.shutdown();
  });

  it('follows a policy per category: allow runs, deny refuses at once, ask waits; a file write asks by default', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'troupe-approval-'));
    const { tool: drop, dropped } = dropTable(false);
    const notify = defineTool({ name: 'notify', description: 'Notifies.', parameters: z.object({}), kind: 'other', execute: () => 'Sent.' });
    const clock = simulatedClock();
    const model = scripted([
      callTools(toolCall('notify', {}, 'n'), toolCall('drop_table', { table: 'x' }, 'd'), toolCall('write_file', { path: 'a.txt', content: 'hi' }, 'w')),
      'Done.',
    ]);
    const runtime = createRuntime({
      model,
      agents: [worker('ops', ['notify', 'drop_table', 'write_file'])],
      tools: [drop, notify],
      workspace,
      toolPolicy: { db_op: { decision: 'deny', reason: 'No schema changes today.' }, tool: 'allow' },
      clock,
      projectAgentDir: false,
    });
    const events = collect(runtime.events$);
    const ops = runtime.spawn('ops', 'Tidy up.');

    expect(await waitingAgents(runtime)).toEqual([{ id: ops.id, state: 'running.acting.waitingForPerson' }]);
    expect(runtime.pendingApprovals()).toMatchObject([{ tool: 'write_file', category: 'file_op', callId: 'w' }]);
    expect(ofType(events, 'tool.result').map((event) => [event.callId, event.status])).toEqual([
      ['n', 'ok'],
      ['d', 'error'],
    ]);
    expect(ofType(events, 'tool.denied')).toMatchObject([{ callId: 'd', error: 'No schema changes today.' }]);
    expect(dropped).toEqual([]);

    runtime.approve(runtime.pendingApprovals()[0]!.requestId);
    await runtime.runUntilIdle();
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('hi');
    expect(await ops.result).toMatchObject({ status: 'completed' });
    await runtime.shutdown();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('asks a policy function about each call, with the caller, tool, category, kind and arguments', async () => {
    const { tool } = dropTable(false);
    const asked: ToolApprovalRequest[] = [];
    const model = scripted([callTools(toolCall('drop_table', { table: 'x' }, 'd')), (request) => `${lastToolMessage(request)?.content}`]);
    const runtime = createRuntime({
      model,
      agents: [worker('dba', ['drop_table'])],
      tools: [tool],
      toolPolicy: (request) => {
        asked.push(request);
        throw new Error('The policy service is down.');
      },
      projectAgentDir: false,
    });

    const result = await runtime.run('dba', 'Drop x.');

    expect(asked).toEqual([{ caller: { id: result.id, name: 'dba', depth: 0 }, tool: 'drop_table', category: 'db_op', kind: 'write', arguments: { table: 'x' }, toolCallId: 'd' }]);
    expect(result.output).toBe('Error: The approval check failed (The policy service is down.).');
    await runtime.shutdown();
  });

  it.each([
    ['a word it does not know', 'reject', 'The tool policy gave an answer it may not give ("reject"), so the call is refused.'],
    ['a misspelt one', 'Deny', 'The tool policy gave an answer it may not give ("Deny"), so the call is refused.'],
    ['an unknown decision', { decision: 'block' }, 'The tool policy gave an answer it may not give ({"decision":"block"}), so the call is refused.'],
    ['a risk that is not one', { decision: 'ask', risk: 'critical' }, 'The tool policy gave an answer it may not give ({"decision":"ask","risk":"critical"}), so the call is refused.'],
    ['a number', 42, 'The tool policy gave an answer it may not give (42), so the call is refused.'],
  ])('refuses the call when a policy function answers %s, and the tool never runs', async (_, answer, reason) => {
    const { tool, dropped } = dropTable(false);
    const model = scripted([callTools(toolCall('drop_table', { table: 'x' }, 'd')), (request) => `${lastToolMessage(request)?.content}`]);
    const runtime = createRuntime({ model, agents: [worker('dba', ['drop_table'])], tools: [tool], toolPolicy: () => answer as never, projectAgentDir: false });

    const result = await runtime.run('dba', 'Drop x.');

    expect(result.output).toBe(`Error: ${reason}`);
    expect(dropped).toEqual([]);
    expect(runtime.pendingApprovals()).toEqual([]);
    await runtime.shutdown();
  });

  it("refuses the call when a needsApproval function answers something else than true or false (plain JavaScript)", async () => {
    const { tool, dropped } = dropTable((() => 'yes') as never);
    const model = scripted([callTools(toolCall('drop_table', { table: 'x' }, 'd')), (request) => `${lastToolMessage(request)?.content}`]);
    const runtime = createRuntime({ model, agents: [worker('dba', ['drop_table'])], tools: [tool], projectAgentDir: false });

    const result = await runtime.run('dba', 'Drop x.');

    expect(result.output).toBe('Error: The needsApproval of drop_table answered "yes", not true or false, so the call is refused.');
    expect(dropped).toEqual([]);
    await runtime.shutdown();
  });

  it('withdraws the request when the waiting agent is cancelled, and the tool never runs', async () => {
    const { tool, dropped } = dropTable();
    const clock = simulatedClock();
    const model = scripted([callTools(toolCall('drop_table', { table: 'x' }, 'd'))]);
    const runtime = createRuntime({ model, agents: [worker('dba', ['drop_table'])], tools: [tool], clock, projectAgentDir: false });
    const dba = runtime.spawn('dba', 'Drop x.');
    await waitingAgents(runtime);
    const [pending] = runtime.pendingApprovals();

    runtime.cancel(dba.id);
    await runtime.runUntilIdle();

    expect(await dba.result).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(runtime.pendingApprovals()).toEqual([]);
    expect(() => runtime.approve(pending!.requestId)).toThrow(UnknownRequestError);
    expect(dropped).toEqual([]);
    await runtime.shutdown();
  });

  it('refuses a bad category or needsApproval at definition, and a bad policy when the runtime is made', () => {
    const base = { name: 't', description: 'T.', parameters: z.object({}), kind: 'read' as const, execute: () => '' };
    expect(() => defineTool({ ...base, category: 'network' as never })).toThrow(InvalidToolError);
    expect(() => defineTool({ ...base, needsApproval: 'yes' as never })).toThrow(InvalidToolError);
    expect(() => createRuntime({ model: scripted([]), toolPolicy: { network: 'ask' } as never })).toThrow(ConfigurationError);
    expect(() => createRuntime({ model: scripted([]), toolPolicy: { file_op: 'maybe' } as never })).toThrow(ConfigurationError);
    expect(() => createRuntime({ model: scripted([]), toolPolicy: { file_op: { decision: 'ask', risk: 'critical' } } as never })).toThrow(ConfigurationError);
  });
});
