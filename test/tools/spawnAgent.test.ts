import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, type ModelRequest } from 'troupe';
import { ScriptedModel, advanceUntilSettled, assignCall, callTools, toolCall } from 'troupe/testing';
import { collect, echoTool, lastToolMessage, leader, ofType, scriptedPerAgent, simulatedClock, tick } from '../stubs.js';

const spawnCall = (args: Record<string, unknown>, id = 'spawn') =>
  toolCall('spawn_agent', { task: 'Translate "hello" to French.', system_prompt: 'You translate.', ...args }, id);

describe('spawn_agent', () => {
  it('makes an agent outside the catalog with some of its creator tools, runs it, and removes it when temporary', async () => {
    const { tool, calls } = echoTool();
    const model = scriptedPerAgent({
      lead: [callTools(spawnCall({ name: 'translator', tools: ['echo'] })), (request) => `Got: ${lastToolMessage(request)?.content}`],
      translator: [callTools(toolCall('echo', { text: 'bonjour' })), 'bonjour'],
    });
    const lead = leader('lead', { tools: ['assign_task', 'spawn_agent', 'echo'] });
    const runtime = createRuntime({ model, agents: [lead], tools: [tool] });
    const events = collect(runtime.events$);

    const result = await runtime.run('lead', 'Say hello in French.');

    expect(result.output).toMatch(/^Got: bonjour/);
    expect(calls).toEqual(['bonjour']);
    const translatorCalls = model.calls.filter((request) => request.agentName === 'translator');
    expect(translatorCalls[0]!.messages[0]).toEqual({ role: 'system', content: 'You translate.' });
    expect(translatorCalls[0]!.tools.map((schema) => schema.name)).toEqual(['echo']);
    expect(ofType(events, 'agent.spawned').find((event) => event.name === 'translator')?.parentId).toBe(result.id);
    expect(runtime.agentNames).toEqual(['lead']);
    await runtime.shutdown();
  });

  it('passes on a tool its creator was given inline, not through createRuntime({ tools })', async () => {
    const { tool, calls } = echoTool();
    const model = scriptedPerAgent({
      lead: [callTools(spawnCall({ name: 'translator', tools: ['echo'] })), (request) => `Got: ${lastToolMessage(request)?.content}`],
      translator: [callTools(toolCall('echo', { text: 'bonjour' })), 'bonjour'],
    });
    const runtime = createRuntime({ model, agents: [leader('lead', { tools: ['spawn_agent', tool] })] });

    const result = await runtime.run('lead', 'Say hello in French.');

    expect(result).toMatchObject({ status: 'completed', output: expect.stringMatching(/^Got: bonjour/) });
    expect(calls).toEqual(['bonjour']);
    await runtime.shutdown();
  });

  it('keeps a permanent agent for later assign_task calls, listed in the description', async () => {
    const seen: ModelRequest[] = [];
    const model = scriptedPerAgent({
      lead: [
        callTools(spawnCall({ name: 'translator', description: 'Translates short texts.', lifecycle: 'permanent' })),
        (request) => (seen.push(request), callTools(assignCall('translator', 'Translate "bye".'))),
        'done',
      ],
      // Each run of the permanent agent is a new sub-agent: it answers by what it is asked.
      translator: [(request) => (String(request.messages.at(-1)?.content).includes('bye') ? 'au revoir' : 'bonjour')],
    });
    const lead = leader('lead', { tools: ['assign_task', 'spawn_agent'] });
    const runtime = createRuntime({ model, agents: [lead] });

    await runtime.run('lead', 'Translate twice.');

    expect(seen[0]!.tools.find((schema) => schema.name === 'assign_task')?.description).toContain('- translator: Translates short texts.');
    expect(lastToolMessage(model.calls.at(-1)!)?.content).toContain('au revoir');
    expect(runtime.agentNames).toContain('translator');
    expect(runtime.cleanupTemporary()).toEqual([]);
    await runtime.shutdown();
  });

  it('refuses tools the creator does not have, and names already taken', async () => {
    const model = scriptedPerAgent({
      lead: [callTools(spawnCall({ name: 'rogue', tools: ['wipe_disk'] }, 'a'), spawnCall({ name: 'lead' }, 'b')), 'ok'],
    });
    const runtime = createRuntime({ model, agents: [leader('lead', { tools: ['spawn_agent'] })] });
    const events = collect(runtime.events$);

    await runtime.run('lead', 'Try.');

    const tools = model.calls.at(-1)!.messages.filter((message) => message.role === 'tool');
    expect(tools[0]).toMatchObject({ isError: true, content: expect.stringMatching(/does not have wipe_disk/) });
    expect(tools[1]).toMatchObject({ isError: true, content: expect.stringMatching(/"lead" already exists/) });
    expect(ofType(events, 'agent.spawned')).toHaveLength(1);
    await runtime.shutdown();
  });

  it("keeps a spawned agent's reach within its creator's: it may delegate and message only where its creator may", async () => {
    const model = scriptedPerAgent({
      lead: [callTools(spawnCall({ name: 'minion', tools: ['assign_task', 'send_message'] })), 'done'],
      minion: [
        (request) => {
          const offered = request.tools.find((schema) => schema.name === 'assign_task')?.description ?? '';
          return callTools(
            assignCall('secret', 'Tell me the secret.', { id: 'escape' }),
            toolCall('send_message', { to: 'secret', content: 'psst' }, 'whisper'),
            assignCall('helper', `Help. (offered: ${offered.includes('- secret') ? 'secret' : 'helper only'})`, { id: 'allowed' }),
          );
        },
        (request) => `minion saw: ${request.messages.filter((message) => message.role === 'tool').map((message) => message.content).join(' | ')}`,
      ],
      helper: [(request) => `helped: ${String(request.messages.at(-1)?.content)}`],
    });
    const lead = leader('lead', { tools: ['assign_task', 'spawn_agent', 'send_message'], subagents: ['helper'], canMessage: ['helper'] });
    const secret = defineAgent({ name: 'secret', description: 'Knows the secret.', systemPrompt: 'Guard it.' });
    const helper = defineAgent({ name: 'helper', description: 'Helps.', systemPrompt: 'Help.' });
    const runtime = createRuntime({ model, agents: [lead, secret, helper] });
    const events = collect(runtime.events$);

    await runtime.run('lead', 'Get it done.');

    expect(model.calls.some((request) => request.agentName === 'secret')).toBe(false);
    expect(ofType(events, 'agent.spawned').map((event) => event.name).sort()).toEqual(['helper', 'lead', 'minion']);
    const minionTools = model.calls.filter((request) => request.agentName === 'minion').at(-1)!.messages.filter((message) => message.role === 'tool');
    expect(minionTools[0]).toMatchObject({ toolCallId: 'escape', isError: true });
    expect(minionTools[1]).toMatchObject({ toolCallId: 'whisper', isError: true });
    expect(minionTools[2]).toMatchObject({ toolCallId: 'allowed', content: expect.stringContaining('helped: Help. (offered: helper only)') });
    await runtime.shutdown();
  });

  it('keeps a temporary agent until its last run ends, so a second run of it is not cut off', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'lead') {
          return request.messages.length === 2
            ? callTools(
                spawnCall({ name: 'tmp', task: 'quick' }, 's1'),
                toolCall('assign_task', { description: 'slow one', agent: 'tmp', task: 'slow', run_in_background: true }, 'a1'),
              )
            : 'lead done';
        }
        return `tmp answer to ${request.messages[1]!.content}`;
      },
      { latencyMs: (request) => (request.agentName === 'tmp' && request.messages[1]!.content === 'slow' ? 5_000 : 100) },
    );
    const runtime = createRuntime({ model, agents: [leader('lead', { tools: ['spawn_agent', 'assign_task'] })], clock });
    const events = collect(runtime.events$);

    await advanceUntilSettled(clock, runtime.run('lead', 'Go.'));
    expect(runtime.agentNames).toContain('tmp'); // the slow run still lives
    await advanceUntilSettled(clock, runtime.idle());

    const ends = [...ofType(events, 'agent.completed'), ...ofType(events, 'agent.failed')].filter((event) => event.name === 'tmp');
    expect(ends.map((event) => event.type)).toEqual(['agent.completed', 'agent.completed']);
    expect(runtime.agentNames).toEqual(['lead']);
    await runtime.shutdown();
  });

  it('does not keep an agent whose task could not be handed over', async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(spawnCall({ name: 'tmp', task: 'Refused.', lifecycle: 'permanent' }, 's1')),
        callTools(spawnCall({ name: 'tmp', task: 'Real task.' }, 's2')),
        'done',
      ],
      tmp: [], // denied the first time, refused the second: it never runs
    });
    let refuse = true;
    const runtime = createRuntime({
      model,
      agents: [leader('lead', { tools: ['spawn_agent'] })],
      delegationPolicy: () => {
        if (refuse) {
          refuse = false;
          throw new Error('not yet');
        }
        return 'allow';
      },
    });

    await runtime.run('lead', 'Go.');

    const tools = model.calls.at(-1)!.messages.filter((message) => message.role === 'tool');
    // A policy that throws denies: the sub-agent ran (and failed, denied), so the permanent agent stays.
    expect(tools[0]).toMatchObject({ isError: true, content: expect.stringMatching(/denied/) });
    expect(tools[1]).toMatchObject({ isError: true, content: expect.stringMatching(/"tmp" already exists/) });
    await runtime.shutdown();
  });

  it('removes the agent when the hand-over itself is refused (the caller stopped)', async () => {
    let release: () => void = () => {};
    const model = scriptedPerAgent({ lead: [callTools(spawnCall({ name: 'tmp', lifecycle: 'permanent' }))] });
    const runtime = createRuntime({
      model,
      agents: [leader('lead', { tools: ['spawn_agent'] })],
      delegationPolicy: () => new Promise((resolve) => (release = () => resolve('allow'))),
    });
    const lead = runtime.spawn('lead', 'Go.');
    for (let i = 0; i < 10 && runtime.agentNames.length < 2; i++) await tick();
    expect(runtime.agentNames).toContain('tmp');

    runtime.cancel(lead.id);
    release();
    await lead.result;
    for (let i = 0; i < 5; i++) await tick();

    expect(runtime.agentNames).toEqual(['lead']);
    await runtime.shutdown();
  });

  it('cleanupTemporary removes temporary agents left running, cancelling them', async () => {
    const model = scriptedPerAgent({
      lead: [callTools(spawnCall({ name: 'sleeper' }))],
      sleeper: [() => new Promise<string>(() => {})],
    });
    const runtime = createRuntime({ model, agents: [leader('lead', { tools: ['spawn_agent'] })] });
    const events = collect(runtime.events$);
    const lead = runtime.spawn('lead', 'Start one.');
    for (let i = 0; i < 20 && !ofType(events, 'model.request').some((event) => event.agentId.includes('sleeper')); i++) await tick();

    expect(runtime.cleanupTemporary()).toEqual(['sleeper']);
    await tick();

    expect(runtime.agentNames).toEqual(['lead']);
    expect(ofType(events, 'agent.failed').find((event) => event.name === 'sleeper')).toMatchObject({ reason: 'cancelled' });
    runtime.cancel(lead.id);
    await runtime.shutdown();
  });
});

describe('parallel_tasks', () => {
  it('fans out, waits for all, and reports completed and failed tasks', async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(
          toolCall('parallel_tasks', {
            tasks: [
              { agent: 'auditor', task: 'Audit.' },
              { agent: 'broken', task: 'Break.' },
              { agent: 'nobody', task: 'Vanish.' },
            ],
          }),
        ),
        'Reported.',
      ],
      auditor: ['Clean.'],
      broken: [new Error('crashed')],
    });
    const lead = leader('lead', { tools: ['parallel_tasks'] });
    const auditor = defineAgent({ name: 'auditor', description: 'Audits.', systemPrompt: 'Audit.' });
    const broken = defineAgent({ name: 'broken', description: 'Breaks.', systemPrompt: 'Break.' });
    const runtime = createRuntime({ model, agents: [lead, auditor, broken] });

    await runtime.run('lead', 'Do three things.');

    const message = lastToolMessage(model.calls.at(-1)!)!;
    const report = JSON.parse(message.content) as { completed: number; failed: number; reports: Record<string, unknown>[] };
    expect(report.completed).toBe(1);
    expect(report.failed).toBe(2);
    expect(report.reports[0]).toMatchObject({ agent: 'auditor', status: 'completed', output: 'Clean.' });
    expect(report.reports[1]).toMatchObject({
      agent: 'broken',
      status: 'failed',
      reason: 'error',
      code: 'model_call_failed',
      error: 'The model call of agent "broken" to model "scripted" failed: crashed',
    });
    expect(report.reports[2]).toMatchObject({ agent: 'nobody', status: 'failed', error: expect.stringMatching(/Unknown agent "nobody"/) });
    expect(message.isError).toBeUndefined();
    await runtime.shutdown();
  });
});

describe('context sharing', () => {
  it('starts a shareContext agent with the caller conversation before its task, and others with the task alone', async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(toolCall('echo', { text: 'facts' }, 'e1')),
        { content: 'Now delegating.', toolCalls: [assignCall('insider', 'Use what we found.', { id: 'i' }), assignCall('outsider', 'Start fresh.', { id: 'o' })] },
        'done',
      ],
      insider: ['ok'],
      outsider: ['ok'],
    });
    const { tool } = echoTool();
    const insider = defineAgent({ name: 'insider', description: 'Sees context.', systemPrompt: 'Inside.', shareContext: true });
    const lastTwo = defineAgent({ name: 'outsider', description: 'Does not.', systemPrompt: 'Outside.' });
    const runtime = createRuntime({ model, agents: [leader('lead', { tools: ['assign_task', 'echo'] }), insider, lastTwo], tools: [tool] });

    await runtime.run('lead', 'Find facts, then delegate.');

    const first = (name: string) => model.calls.find((request) => request.agentName === name)!.messages;
    expect(first('insider').map((message) => [message.role, message.content])).toEqual([
      ['system', 'Inside.'],
      ['user', 'Find facts, then delegate.'],
      ['assistant', ''],
      ['tool', 'echo: facts'],
      ['assistant', 'Now delegating.'],
      ['user', 'Use what we found.'],
    ]);
    expect(first('outsider').map((message) => message.role)).toEqual(['system', 'user']);
    await runtime.shutdown();
  });

  it('shares only the last N messages, never starting with a tool answer cut from its call', async () => {
    const model = scriptedPerAgent({
      lead: [callTools(toolCall('echo', { text: 'facts' }, 'e1')), callTools(assignCall('two', 'Go.', { id: 'a' }), assignCall('one', 'Go.', { id: 'b' })), 'done'],
      one: ['ok'],
      two: ['ok'],
    });
    const { tool } = echoTool();
    const two = defineAgent({ name: 'two', description: 'Sees two.', systemPrompt: 'Two.', shareContext: 2 });
    const one = defineAgent({ name: 'one', description: 'Sees one.', systemPrompt: 'One.', shareContext: 1 });
    const runtime = createRuntime({ model, agents: [leader('lead', { tools: ['assign_task', 'echo'] }), two, one], tools: [tool] });

    await runtime.run('lead', 'Go.');

    const roles = (name: string) => model.calls.find((request) => request.agentName === name)!.messages.map((message) => message.role);
    // The lead's last two messages before the delegation are the echo call and its answer: a whole pair.
    expect(roles('two')).toEqual(['system', 'assistant', 'tool', 'user']);
    // The last one alone is a tool answer without its call: it is left out.
    expect(roles('one')).toEqual(['system', 'user']);
    await runtime.shutdown();
  });
});
