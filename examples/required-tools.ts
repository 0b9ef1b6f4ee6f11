// Required tools: an agent that must call `write_report` before its answer is taken. The auditor answers too early, is
// told what is missing, writes the report and answers; a hastier auditor with two turns never writes it and fails with
// `required_tools`. Offline, on scripted models.
//
//   npx tsx examples/required-tools.ts
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';

const reports: string[] = [];
const writeReport = defineTool({
  name: 'write_report',
  description: 'Files the audit report.',
  parameters: z.object({ text: z.string().describe('The report.') }),
  kind: 'write',
  execute: ({ text }) => {
    reports.push(text);
    return 'Filed.';
  },
});

const auditor = (name: string, maxTurns: number) =>
  defineAgent({
    name,
    description: 'Audits the books.',
    systemPrompt: 'Audit the books, file your report with write_report, then answer with a summary.',
    tools: ['write_report'],
    requiredToolCalls: ['write_report'],
    maxTurns,
  });

const model = ScriptedModel.perAgent({
  careful: [
    'The books look fine.', // too early: no report filed yet
    callTools(toolCall('write_report', { text: 'Q3 audit: 412 entries checked, no discrepancy.' })),
    'Filed the Q3 report: no discrepancy.',
  ],
  hasty: ['Fine.', 'Fine, really.'],
});

const runtime = createRuntime({ model, agents: [auditor('careful', 5), auditor('hasty', 2)], tools: [writeReport], projectAgentDir: false });
const [careful, hasty] = await Promise.all([runtime.run('careful', 'Audit Q3.'), runtime.run('hasty', 'Audit Q3.')]);

console.log('The careful auditor');
for (const message of model.calls.filter((request) => request.agentName === 'careful').at(-1)!.messages.slice(1)) {
  console.log(`  ${message.role.padEnd(9)} ${message.role === 'assistant' && message.toolCalls?.length ? `calls ${message.toolCalls.map((call) => call.name).join(', ')}` : message.content}`);
}
console.log(`  → ${careful.status}: ${careful.output}`);
console.log(`Reports filed: ${reports.length} (${reports.join(' | ')})`);
console.log(`\nThe hasty auditor → ${hasty.status} (${hasty.reason}): ${hasty.error?.message}`);
await runtime.shutdown();
if (careful.status !== 'completed' || hasty.reason !== 'required_tools') process.exitCode = 1;
