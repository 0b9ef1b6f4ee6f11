// Deciding from a failure's data, not its text. Every failed result carries `error: { code, message, fault, status?,
// retryable? }`: here a flaky model (HTTP 429, then 503, then an answer) is tried again while its error says it may
// succeed; a model that refuses the key (401) is not; an agent out of turns gets a narrower task. troupe's own retries
// of model calls (`retry`, see examples/retries.ts) are turned off here, so each failure reaches the code.
//
//   npx tsx examples/failures.ts
import { createRuntime, defineAgent, ModelError, type AgentResult } from 'troupe';
import { callTools, ScriptedModel, toolCall, type ScriptStep } from 'troupe/testing';

const agent = (name: string, extra: { maxTurns?: number } = {}) =>
  defineAgent({ name, description: `The ${name}.`, systemPrompt: `You are the ${name}.`, tools: ['blackboard_read'], ...extra });

// One queue of replies per agent name, shared by every run of that name (a retry is a new agent of the same name).
const replies: Record<string, ScriptStep[]> = {
  flaky: [new ModelError('Rate limited.', { status: 429 }), new ModelError('Service unavailable.', { status: 503 }), 'Here is the summary.'],
  locked: [new ModelError('Incorrect API key.', { status: 401 })],
  // It keeps reading instead of answering: two turns are not enough for the broad task; the narrow one gets three.
  wanderer: [callTools(toolCall('blackboard_read', { key: 'notes' })), callTools(toolCall('blackboard_read', { key: 'more' })), 'Done: one line.'],
};
const model = new ScriptedModel((request) => {
  const next = replies[request.agentName]?.shift() ?? 'Nothing more to say.';
  if (next instanceof Error) throw next;
  return typeof next === 'function' ? next(request) : next;
});
const runtime = createRuntime({ model, agents: [agent('flaky'), agent('locked'), agent('wanderer', { maxTurns: 2 })], retry: { attempts: 1 } });

/** Runs an agent, trying again (up to `attempts` times) while its failure says another try may succeed. */
async function runWithRetries(name: string, task: string, attempts = 3): Promise<AgentResult> {
  for (let attempt = 1; ; attempt++) {
    const result = await runtime.run(name, task);
    const error = result.error;
    if (result.status === 'completed' || !error) return result;
    console.log(`  ${name}, try ${attempt}: failed (${error.code}, ${error.fault}${error.status ? `, HTTP ${error.status}` : ''})`);
    if (!error.retryable || attempt === attempts) return result;
  }
}

for (const [name, task] of [
  ['flaky', 'Summarise the notes.'],
  ['locked', 'Summarise the notes.'],
  ['wanderer', 'Summarise everything you can find.'],
] as const) {
  const result = await runWithRetries(name, task);
  if (result.status === 'completed') {
    console.log(`${name}: ${result.output}`);
    continue;
  }
  switch (result.error?.code) {
    case 'model_error':
      console.log(`${name}: gave up; the model's side says: ${result.error.message}`);
      break;
    case 'max_turns': {
      const narrower = await runtime.run(name, 'Summarise the notes in one line.', { maxTurns: 3 });
      console.log(`${name}: out of turns, so a narrower task with one more turn: ${narrower.output ?? narrower.error?.message}`);
      break;
    }
    default:
      console.log(`${name}: ${result.error?.message}`);
  }
}
await runtime.shutdown();
