// A small team for the inspectors' tests: a lead hands two tasks to workers at once; each worker looks something up,
// messages the lead and answers. Scripted models, so it runs offline; `latencyMs` slows each model turn (on the
// runtime's clock) so a page can watch it go.
import { z } from 'zod';
import { defineAgent, defineTool } from 'troupe';
import { assignCall, callTools, ScriptedModel, toolCall, type ScriptedModelOptions } from 'troupe/testing';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a topic up in the notes.',
  parameters: z.object({ topic: z.string() }),
  kind: 'read',
  execute: ({ topic }) => `Notes on ${topic}: ripe in autumn.`,
});

/** The agents of the team. */
export const teamAgents = [
  defineAgent({ name: 'lead', description: 'Splits the work and sums up.', systemPrompt: 'Hand out the work, then sum up.', tools: ['assign_task'] }),
  defineAgent({
    name: 'worker',
    description: 'Looks things up.',
    systemPrompt: 'Look it up, tell the lead, answer.',
    tools: [lookup, 'send_message'],
    canMessage: ['lead'],
  }),
];

/** The team's model: every agent's script (each worker replays the worker script). */
export function teamModel(options: ScriptedModelOptions = {}): ScriptedModel {
  return ScriptedModel.perAgent(
    {
      lead: [
        callTools(assignCall('worker', 'Research apples.', { description: 'apples', id: 'apples' }), assignCall('worker', 'Research pears.', { description: 'pears', id: 'pears' })),
        'Apples and pears both ripen in autumn.',
      ],
      worker: [
        callTools(toolCall('lookup', { topic: 'fruit' }, 'look')),
        callTools(toolCall('send_message', { to: 'lead', content: 'Found the notes.' }, 'tell')),
        'Ripe in autumn.',
      ],
    },
    options,
  );
}
