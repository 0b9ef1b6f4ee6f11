// A scenario for the troupe command: a planner hands a weekend trip to two specialists at once (a meteorologist and
// an accountant, who first asks for a currency it cannot convert), then sums up what they found. Every agent runs on
// a scripted model, so no key or network is needed; `troupe run` makes the runtime, shows the live tree and prints the
// planner's answer.
//
//   npx troupe run examples/scenario.ts
//   npx troupe run examples/scenario.ts --json > events.jsonl
import { z } from 'zod';
import { defineAgent, defineTool, type ModelRequest, type Scenario } from 'troupe';
import { assignCall, callTools, ScriptedModel, toolCall } from 'troupe/testing';

const forecasts: Record<string, string> = { lisbon: 'Saturday sunny, 24°C; Sunday showers in the afternoon, 19°C.' };
const eurosPer: Record<string, number> = { EUR: 1, USD: 0.92, GBP: 1.17 };

const forecast = defineTool({
  name: 'forecast',
  description: "Gives the weekend's weather forecast for a city.",
  parameters: z.object({ city: z.string() }),
  kind: 'read',
  execute: ({ city }) => forecasts[city.toLowerCase()] ?? `No forecast for ${city}.`,
});

const convert = defineTool({
  name: 'convert',
  description: 'Converts an amount of money to euros.',
  parameters: z.object({ amount: z.number(), currency: z.string() }),
  kind: 'read',
  execute: ({ amount, currency }) => {
    const rate = eurosPer[currency];
    if (rate === undefined) throw new Error(`Unknown currency ${currency}; known: ${Object.keys(eurosPer).join(', ')}.`);
    return `${(amount * rate).toFixed(2)} EUR`;
  },
});

const planner = defineAgent({
  name: 'planner',
  description: 'Plans trips by asking specialists, then sums up.',
  systemPrompt: 'You plan trips. Hand the weather and the budget to specialists at once, then answer in two sentences.',
  tools: ['assign_task'],
});
const meteorologist = defineAgent({
  name: 'meteorologist',
  description: 'Reads weather forecasts.',
  systemPrompt: 'Look up the forecast, then say in one sentence what to pack.',
  tools: [forecast],
});
const accountant = defineAgent({
  name: 'accountant',
  description: 'Works out what a trip costs, in euros.',
  systemPrompt: 'Convert every price to euros, then give the total.',
  tools: [convert],
});

const lastTool = (request: ModelRequest) => [...request.messages].reverse().find((message) => message.role === 'tool')?.content ?? '';
const reports = (request: ModelRequest) =>
  request.messages.filter((message) => message.role === 'tool').map((message) => message.content.split('\n\n[agent_id')[0]);

const model = ScriptedModel.perAgent(
  {
    planner: [
      callTools(
        assignCall('meteorologist', 'What is the weather in Lisbon this weekend?', { description: 'Weekend weather in Lisbon', id: 'weather' }),
        assignCall('accountant', 'The flights cost 310 USD and the hotel 180 GBP.', { description: 'Trip budget in euros', id: 'budget' }),
      ),
      (request) => `Lisbon it is. ${reports(request).join(' ')}`,
    ],
    meteorologist: [callTools(toolCall('forecast', { city: 'Lisbon' })), (request) => `Pack sunglasses and an umbrella: ${lastTool(request)}`],
    accountant: [
      callTools(toolCall('convert', { amount: 310, currency: 'US$' }, 'flights'), toolCall('convert', { amount: 180, currency: 'GBP' }, 'hotel')),
      callTools(toolCall('convert', { amount: 310, currency: 'USD' }, 'flights-again')),
      'The trip costs 495.80 EUR: 285.20 for the flights and 210.60 for the hotel.',
    ],
  },
  { model: 'gpt-4o-mini', latencyMs: (request) => 150 + 10 * request.messages.length },
);

export default {
  agents: [planner, meteorologist, accountant],
  model,
  run: (runtime, { task }) => runtime.run('planner', task ?? 'Plan a weekend in Lisbon for two.'),
} satisfies Scenario;
