// One agent, one tool. Offline it runs on a scripted model; with OPENAI_API_KEY or OPENAI_BASE_URL set it asks a
// real model (OPENAI_MODEL picks which, default gpt-4o-mini; for Ollama: OPENAI_BASE_URL=http://127.0.0.1:11434/v1
// OPENAI_MODEL=llama3.1).
//
//   npx tsx examples/hello.ts
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, formatEvent, OpenAIModel, type Model } from 'troupe';
import { callTools, ScriptedModel, toolCall } from 'troupe/testing';

const clock = defineTool({
  name: 'current_time',
  description: 'Returns the current time as an ISO 8601 string.',
  parameters: z.object({}),
  kind: 'read',
  execute: () => new Date().toISOString(),
});

const greeter = defineAgent({
  name: 'greeter',
  description: 'Greets people, mentioning the time.',
  systemPrompt: 'You greet the user warmly in one sentence. Call current_time first and mention the hour.',
  tools: [clock],
});

const online = Boolean(process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL);
const model: Model = online
  ? new OpenAIModel({ model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini' })
  : new ScriptedModel([
      callTools(toolCall('current_time', {}, 'call_1')),
      (request) => {
        const time = request.messages.at(-1)?.content ?? '';
        return `Hello Ada! It is ${time.slice(11, 16)} UTC, a fine time to say hello.`;
      },
    ]);

const runtime = createRuntime({ model, agents: [greeter] });
runtime.events$.subscribe((event) => console.log(formatEvent(event)));

const result = await runtime.run('greeter', 'Say hello to Ada.');
console.log(result.status === 'completed' ? `\n${result.output}` : `\nFailed (${result.reason}, ${result.error?.code}): ${result.error?.message}`);
console.log(`tokens: ${result.metrics.own.inputTokens} in, ${result.metrics.own.outputTokens} out; cost $${result.metrics.own.costUsd.toFixed(6)}`);
await runtime.shutdown();
process.exitCode = result.status === 'completed' ? 0 : 1;
