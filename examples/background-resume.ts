// Background work and resumed sessions. A lead starts a researcher in the background, asks for its result while it
// still runs (task_output says "running"), waits for it, then resumes the same researcher with a follow-up that
// builds on what it found the first time: the resumed researcher sees its whole earlier conversation.
//
//   npx tsx examples/background-resume.ts
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, formatEvent, type ModelRequest } from 'troupe';
import { assignCall, callTools, ScriptedModel, toolCall } from 'troupe/testing';

const library: Record<string, string> = {
  'actor model': 'Hewitt, 1973: actors send messages, create actors, and decide how to handle the next message.',
  supervision: 'Erlang/OTP: supervisors restart failed children; "let it crash".',
};

const search = defineTool({
  name: 'search_library',
  description: 'Looks a topic up in the library.',
  parameters: z.object({ topic: z.string() }),
  kind: 'read',
  execute: ({ topic }) => library[topic] ?? `Nothing on "${topic}".`,
});

const lead = defineAgent({
  name: 'lead',
  description: 'Plans a talk and delegates the research.',
  systemPrompt: 'You plan a talk. Start research in the background, keep planning, then collect it.',
  tools: ['assign_task', 'task_output'],
});
const researcher = defineAgent({
  name: 'researcher',
  description: 'Looks topics up in the library and reports with sources.',
  systemPrompt: 'You research topics in the library and answer with the source.',
  tools: [search],
});

// ── Scripted models ────────────────────────────────────────────────────────────────────────────────────
const lastTool = (request: ModelRequest) => [...request.messages].reverse().find((message) => message.role === 'tool');
/** The researcher's id, read from the background start message (or any later message that names it). */
const researcherId = (request: ModelRequest) =>
  request.messages.map((message) => /(agent:researcher:[A-Za-z0-9]+)/.exec(message.content)?.[1]).find(Boolean) ?? '';

const model = ScriptedModel.perAgent(
  {
    lead: [
      {
        content: 'Research first, in the background.',
        toolCalls: [
          assignCall('researcher', 'Where does the actor model come from?', {
            description: 'Research the origin of the actor model',
            background: true,
            id: 'start',
          }),
        ],
      },
      (request) => ({ content: 'Meanwhile I outline the talk. Is the research done?', toolCalls: [toolCall('task_output', { agent_id: researcherId(request) }, 'peek')] }),
      (request) => ({ content: 'Not yet; I will wait for it.', toolCalls: [toolCall('task_output', { agent_id: researcherId(request), blocking: true, timeout_ms: 60_000 }, 'wait')] }),
      (request) => ({
        content: 'Now a follow-up for the same researcher.',
        toolCalls: [
          assignCall('researcher', 'How did that idea lead to supervision trees?', {
            description: 'Follow up on supervision',
            resume: researcherId(request),
            id: 'follow-up',
          }),
        ],
      }),
      (request) => `Talk plan: 1) origins, 2) supervision. Research said: ${lastTool(request)?.content.split('\n\n[agent_id')[0]}`,
    ],
    researcher: [
      callTools(toolCall('search_library', { topic: 'actor model' }, 's1')),
      (request) => `The actor model comes from ${lastTool(request)?.content}`,
      // The resumed session: the researcher answers from its earlier findings, which are in its conversation.
      (request) => {
        const earlier = request.messages.find((message) => message.role === 'assistant' && message.content.startsWith('The actor model'));
        return { content: `Building on "${earlier?.content.slice(0, 40)}…", I will look up supervision.`, toolCalls: [toolCall('search_library', { topic: 'supervision' }, 's2')] };
      },
      (request) => `Hewitt's actors inspired Erlang, where ${lastTool(request)?.content}`,
    ],
  },
  { latencyMs: (request) => (request.agentName === 'researcher' ? 400 : 100) },
);

const runtime = createRuntime({ model, agents: [lead, researcher] });
runtime.events$.subscribe((event) => console.log(formatEvent(event)));
const result = await runtime.run('lead', 'Plan a ten-minute talk on the actor model.');

const researcherCalls = model.calls.filter((request) => request.agentName === 'researcher');
const resumed = researcherCalls.at(-2)!;
const peek = model.calls
  .flatMap((request) => request.messages)
  .find((message) => message.role === 'tool' && message.toolCallId === 'peek');
console.log(`\n${result.output ?? result.error?.message}`);
console.log(`\nWhile the researcher ran, task_output said: ${peek?.content}`);
console.log(`\nThe resumed researcher kept its id (${resumed.agentId}) and saw ${resumed.messages.length} messages, its first task included:`);
for (const message of resumed.messages) console.log(`  ${message.role.padEnd(9)} ${message.content.replace(/\s+/g, ' ').slice(0, 90)}`);
await runtime.shutdown();
process.exitCode = result.status === 'completed' ? 0 : 1;
