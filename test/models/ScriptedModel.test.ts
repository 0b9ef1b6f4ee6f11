import { describe, expect, it } from 'vitest';
import * as troupe from 'troupe';
import { assignTask, createRuntime, TroupeError, type ModelReply, type ToolCall } from 'troupe';
import {
  assignCall,
  callTools,
  InvalidScriptStepError,
  ScriptedModel,
  ScriptExhaustedError,
  textReply,
  toolCall,
  UnusedStepsError,
  type ScriptStep,
} from 'troupe/testing';
import { modelRequest } from '../support/modelRequest.js';
import { echoTool, leader, worker } from '../stubs.js';

const asAgent = (agentName: string, key = '1') => modelRequest({ agentName, agentId: `agent:${agentName}:${key}` });

describe('unused steps', () => {
  it('a list script with steps left fails assertDone with an UnusedStepsError saying how many and after how many calls', async () => {
    const model = new ScriptedModel(['one', 'two', 'three'], { name: 'lister' });
    await model.complete(modelRequest());

    expect(model.remaining).toBe(2);
    const error = catchError(() => model.assertDone());
    expect(error).toBeInstanceOf(UnusedStepsError);
    expect(error).toBeInstanceOf(TroupeError);
    expect(error).toMatchObject({ code: 'unused_steps', model: 'lister', remaining: 2, calls: 1, byAgent: {} });
    expect((error as Error).message).toMatch(/"lister" has 2 unused step\(s\) after 1 call\(s\)/);
  });

  it('a list script used to its end passes, and a function script always does', async () => {
    const list = new ScriptedModel(['one', new Error('boom')]);
    await list.complete(modelRequest());
    await expect(list.complete(modelRequest())).rejects.toThrow('boom');
    expect(() => list.assertDone()).not.toThrow();

    const fn = new ScriptedModel(() => 'always');
    expect(() => fn.assertDone()).not.toThrow();
  });

  it('a call past the end of the script rejects with a ScriptExhaustedError naming the agent', async () => {
    const model = new ScriptedModel(['only']);
    await model.complete(modelRequest());
    await expect(model.complete(asAgent('tester', 'late'))).rejects.toMatchObject({
      code: 'script_exhausted',
      callIndex: 1,
      agentId: 'agent:tester:late',
    });
    await expect(model.complete(modelRequest())).rejects.toBeInstanceOf(ScriptExhaustedError);
  });

  it('a per-agent script reports each agent that stopped short by id, and each scripted name that never ran by name', async () => {
    const model = ScriptedModel.perAgent({ lead: ['a', 'b'], writer: ['w1', 'w2', 'w3'], critic: ['c'] });
    await model.complete(asAgent('lead'));
    await model.complete(asAgent('lead'));
    await model.complete(asAgent('writer', 'x'));
    await model.complete(asAgent('writer', 'y'));
    await model.complete(asAgent('writer', 'y'));

    expect(model.remaining).toBe(4);
    expect(catchError(() => model.assertDone())).toMatchObject({
      code: 'unused_steps',
      remaining: 4,
      calls: 5,
      byAgent: { 'agent:writer:x': 2, 'agent:writer:y': 1, critic: 1 },
    });
  });

  it('a per-agent script passes once every agent of every scripted name has used its whole list', async () => {
    const model = ScriptedModel.perAgent({ lead: ['a'], writer: ['w'] });
    await model.complete(asAgent('lead'));
    await model.complete(asAgent('writer', 'x'));
    await model.complete(asAgent('writer', 'y'));
    expect(() => model.assertDone()).not.toThrow();
  });

  it('catches a run that ended before its script: a failed tool batch leaves the answer unused', async () => {
    const model = new ScriptedModel([callTools(toolCall('echo', { text: 'hi' })), 'The echo said hi.']);
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [echoTool().tool], maxTurns: 1 });

    const result = await runtime.run('worker', 'Echo.');

    expect(result).toMatchObject({ status: 'failed', reason: 'max_turns' });
    expect(() => model.assertDone()).toThrow(UnusedStepsError);
    await runtime.shutdown();
  });
});

describe('steps that give no reply', () => {
  /** A step as a script built at run time (or in plain JavaScript) may hold it, whatever its type. */
  const odd = (value: unknown) => value as ScriptStep;

  it('a null reply, a null tool call and other non-replies reject with an InvalidScriptStepError naming the step and the fault', async () => {
    const cases: [unknown, string][] = [
      [null, 'step 1 of the script (asked by agent:tester:abc) gave null instead of a reply'],
      [undefined, 'step 1 of the script (asked by agent:tester:abc) gave undefined instead of a reply'],
      [42, 'step 1 of the script (asked by agent:tester:abc) gave the number 42 instead of a reply'],
      [{ content: '', toolCalls: [toolCall('echo', {}), null] }, 'step 1 of the script (asked by agent:tester:abc) gave a reply whose tool call 2 is null, not { id, name, arguments }'],
      [{ toolCalls: { id: 'c1', name: 'echo', arguments: '{}' } }, 'step 1 of the script (asked by agent:tester:abc) gave a reply whose toolCalls is an object, not a list'],
      [{ content: 7 }, 'step 1 of the script (asked by agent:tester:abc) gave a reply whose content is the number 7, not text'],
      [() => null, 'step 1 of the script (asked by agent:tester:abc) gave null instead of a reply'],
    ];
    for (const [step, message] of cases) {
      const model = new ScriptedModel([odd(step)], { name: 'sloppy' });
      const error = await model.complete(modelRequest()).then(() => undefined, (thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(InvalidScriptStepError);
      expect(error).toBeInstanceOf(TroupeError);
      expect(error).toMatchObject({ code: 'invalid_script_step', fault: 'user', model: 'sloppy', step: 'step 1 of the script', agentId: 'agent:tester:abc' });
      expect((error as Error).message).toContain(`ScriptedModel "sloppy": ${message}.`);
    }
  });

  it('names the step of a per-agent script (counted from 1) and the call of a function script', async () => {
    const perAgent = ScriptedModel.perAgent({ writer: ['first', odd(null)] });
    await perAgent.complete(asAgent('writer'));
    await expect(perAgent.complete(asAgent('writer'))).rejects.toMatchObject({
      code: 'invalid_script_step',
      step: 'step 2 of the script of agent "writer"',
      agentId: 'agent:writer:1',
    });

    const fn = new ScriptedModel((_, callIndex) => (callIndex === 0 ? 'ok' : (odd({ content: '', toolCalls: [null] }) as ModelReply)));
    await fn.complete(modelRequest());
    await expect(fn.complete(modelRequest())).rejects.toThrow(
      'ScriptedModel "scripted": call 2 of the script function (asked by agent:tester:abc) gave a reply whose tool call 1 is null',
    );
  });

  it('fails the agent that asked, with the step named and the script (the user’s side) at fault', async () => {
    const runtime = createRuntime({ model: new ScriptedModel([odd(null)]), agents: [worker()] });
    const result = await runtime.run('worker', 'Go.');
    expect(result).toMatchObject({ status: 'failed', reason: 'error', error: { code: 'invalid_script_step', fault: 'user' } });
    expect(result.error?.message).toMatch(
      /^The model call of agent "worker" to model "scripted" failed: ScriptedModel "scripted": step 1 of the script \(asked by agent:worker:\w+\) gave null instead of a reply\./,
    );
    await runtime.shutdown();
  });

  it('estimates usage for a reply without content, and for tool calls whose name or arguments are not text', async () => {
    const reply = await new ScriptedModel([odd({ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'hi' } }, { id: 'c2' }] })]).complete(modelRequest());
    expect(reply.usage).toEqual({ inputTokens: Math.ceil(('You are terse.'.length + 'Hello?'.length) / 4), outputTokens: 1 });
  });
});

describe('the steps of a script', () => {
  it("gives a script's function a random stream always: the runtime's seeded one, or its own for a request made by hand", async () => {
    const draws = (model: ScriptedModel) => model.complete(modelRequest()).then((reply) => reply.content);
    const script = (request: { random: () => number }) => String(request.random());
    const inUnit = (text: string | null | undefined) => Number(text) >= 0 && Number(text) < 1;
    // By hand: a stream of the model's own, seeded 0, so two models draw alike, and one model draws on.
    const [first, again] = [await draws(new ScriptedModel(script)), await draws(new ScriptedModel(script))];
    expect(inUnit(first)).toBe(true);
    expect(again).toBe(first);
    const model = new ScriptedModel(script);
    expect([await draws(model), await draws(model)]).toEqual([first, expect.not.stringMatching(first!)]);
    // From the runtime: the agent's stream (its latency function draws from it too).
    const seeded = new ScriptedModel((request) => String(request.random()), { latencyMs: (request) => Math.floor(request.random() * 10) });
    const runtime = createRuntime({ model: seeded, agents: [worker('w')], seed: 3, projectAgentDir: false });
    const drawn = (await runtime.run('w', 'Draw.')).output;
    expect(inUnit(drawn)).toBe(true);
    expect(drawn).not.toBe(first);
    await runtime.shutdown();
  });

  it('toolCall turns its arguments into JSON text, keeps a string as it is, and names the call after the tool', () => {
    expect(toolCall('read_file', { path: 'a.txt' })).toEqual({ id: 'call_read_file', name: 'read_file', arguments: '{"path":"a.txt"}' });
    expect(toolCall('read_file', '{not json', 'bad')).toEqual({ id: 'bad', name: 'read_file', arguments: '{not json' });
  });

  it('callTools asks for its calls without text, and textReply answers without calls', () => {
    const calls: ToolCall[] = [toolCall('a', {}), toolCall('b', {}, 'second')];
    expect(callTools(...calls)).toEqual({ content: '', toolCalls: calls });
    expect(textReply('Done.')).toEqual({ content: 'Done.' });
  });

  it('assignCall makes arguments assign_task accepts, with its options under the names the tool uses', () => {
    const plain = assignCall('researcher', 'Find sources.');
    const full = assignCall('researcher', 'Go on.', { id: 'again', description: 'continue', background: true, resume: 'agent:researcher:1' });

    expect(plain).toMatchObject({ id: 'call_researcher', name: 'assign_task' });
    expect(assignTask.parameters.parse(JSON.parse(plain.arguments))).toEqual({
      description: 'work for researcher',
      agent: 'researcher',
      task: 'Find sources.',
    });
    expect(full.id).toBe('again');
    expect(assignTask.parameters.parse(JSON.parse(full.arguments))).toEqual({
      description: 'continue',
      agent: 'researcher',
      task: 'Go on.',
      run_in_background: true,
      resume: 'agent:researcher:1',
    });
  });

  it('scripts a whole delegation: the lead hands a task over and reads the answer, and every step is used', async () => {
    const model = ScriptedModel.perAgent({
      lead: [callTools(assignCall('helper', 'Count the TODOs.', { id: 'count' })), textReply('There are 3 TODOs.')],
      helper: ['3'],
    });
    const runtime = createRuntime({ model, agents: [leader('lead'), worker('helper')] });

    const result = await runtime.run('lead', 'How many TODOs?');

    expect(result).toMatchObject({ status: 'completed', output: 'There are 3 TODOs.' });
    const answer = model.calls.at(-1)!.messages.find((message) => message.role === 'tool');
    expect(answer).toMatchObject({ toolCallId: 'count', content: expect.stringContaining('3') });
    model.assertDone();
    await runtime.shutdown();
  });
});

describe('where ScriptedModel is shipped', () => {
  it('troupe/testing has it; the main entry still re-exports the same class for one release (deprecated)', () => {
    expect(troupe.ScriptedModel).toBe(ScriptedModel);
    expect(troupe.UnusedStepsError).toBe(UnusedStepsError);
    expect(troupe.InvalidScriptStepError).toBe(InvalidScriptStepError);
  });
});

function catchError(action: () => void): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('Expected the action to throw.');
}

describe('toolCall', () => {
  it('sends no arguments as an empty object, so the call stays a ToolCall with its JSON text', () => {
    expect(toolCall('list_files', undefined)).toEqual({ id: 'call_list_files', name: 'list_files', arguments: '{}' });
    expect(toolCall('read_file', { path: 'a.txt' }, 'r')).toEqual({ id: 'r', name: 'read_file', arguments: '{"path":"a.txt"}' });
  });
});

describe('ScriptedModel.perAgent, past its scripts', () => {
  it('says which agent has no script (and which it has), or how long the script it ran past was', async () => {
    const lead = troupe.defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Lead.' });
    const beta = troupe.defineAgent({ name: 'beta', description: 'Beta.', systemPrompt: 'Beta.' });
    const model = ScriptedModel.perAgent({ lead: ['one'], alpha: ['a'] });
    const runtime = createRuntime({ model, agents: [lead, beta], projectAgentDir: false });

    const first = await runtime.run('lead', 'First.');
    const again = await runtime.resume(first.id, 'Again.');
    const past = await again.result;
    const unscripted = await runtime.run('beta', 'Go.');

    expect(past.error).toMatchObject({ code: 'script_exhausted', message: expect.stringContaining(`The script of agent "lead" has 1 step; call #2 (from agent ${first.id}) has none.`) });
    expect(unscripted.error).toMatchObject({
      code: 'script_exhausted',
      message: expect.stringContaining(`ScriptedModel.perAgent has no script for agent "beta" (${unscripted.id}); it has scripts for: lead, alpha.`),
    });
    await runtime.shutdown();
  });
});
