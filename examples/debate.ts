// A debate between two resident agents, judged by a third, offline on scripted models. The judge asks each debater
// for an argument in turn over three rounds (send_message with expect_reply), the debaters stay alive between rounds
// and answer with `reply`, and the judge then decides. Time is simulated: every model takes 1–3 s of it, and the
// whole debate runs in a few milliseconds of real time.
//
//   npx tsx examples/debate.ts [--seed N]
import { SimulatedClock } from 'xstate';
import { createRuntime, defineAgent, formatMetrics, type ModelRequest } from 'troupe';
import { callTools, ScriptedModel, toolCall, type ScriptRequest } from 'troupe/testing';

const seedAt = process.argv.indexOf('--seed');
const seed = seedAt > 0 ? Number(process.argv[seedAt + 1]) : 7;
const ROUNDS = 3;

const debater = (name: string, side: string) =>
  defineAgent({
    name,
    description: `Argues ${side} the motion.`,
    systemPrompt: `You argue ${side} the motion. Answer every message from the judge with one argument, using reply.`,
    tools: ['reply'],
    resident: true,
  });

const judge = defineAgent({
  name: 'judge',
  description: 'Runs the debate and decides it.',
  systemPrompt: `Ask "pro" and then "con" for an argument in each of ${ROUNDS} rounds, then decide who argued better.`,
  tools: ['send_message'],
  canMessage: ['pro', 'con'],
});

const points: Record<string, string[]> = {
  pro: [
    'Actors keep state private, so agents cannot corrupt each other.',
    'Supervision turns a failing agent into an event, not a crash.',
    'Messages are plain JSON, so a run can be replayed byte for byte.',
    'A bounded inbox makes overload visible instead of silent.',
  ],
  con: [
    'Message passing hides control flow that a plain function call shows.',
    'Every hop through a supervisor costs time a direct call does not.',
    'Debugging a conversation between agents needs an inspector to see it.',
    'Simple tasks rarely need more than one agent.',
  ],
};

/** The text of the last message, and whether it is a tool result. */
const last = (request: ModelRequest) => request.messages[request.messages.length - 1]!;
const turn = (request: ModelRequest) => request.messages.filter((message) => message.role === 'assistant').length;
const latency = (request: ScriptRequest) => 1_000 + Math.floor(request.random() * 2_000);

const model = new ScriptedModel(
  (request) => {
    const message = last(request);
    if (request.agentName === 'judge') {
      // Turns 0..5 ask pro and con in turn; then the judge weighs the replies it got.
      const asked = turn(request);
      if (asked < ROUNDS * 2) {
        const side = asked % 2 === 0 ? 'pro' : 'con';
        const round = Math.floor(asked / 2) + 1;
        const question = { to: side, content: `Round ${round}: your argument, ${side}.`, expect_reply: true, timeout_ms: 60_000 };
        return callTools(toolCall('send_message', question, `ask_${asked}`));
      }
      const replies = request.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      const score = (side: string) => replies.filter((text) => text.includes(`from agent:${side}:`)).reduce((sum, text) => sum + text.length, 0);
      const [winner, loser] = score('pro') >= score('con') ? ['pro', 'con'] : ['con', 'pro'];
      return `Decision: ${winner} wins, with ${score(winner)} characters of argument against ${score(loser)} over ${ROUNDS} rounds.`;
    }
    // A debater: a message from the judge gets one argument, drawn from its own seeded random stream.
    if (message.role === 'user' && message.content.startsWith('[message')) {
      const said = JSON.stringify(request.messages);
      const unsaid = points[request.agentName]!.filter((point) => !said.includes(point));
      const argument = unsaid[Math.floor(request.random() * unsaid.length)]!;
      return callTools(toolCall('reply', { content: argument }, `r_${turn(request)}`));
    }
    return message.role === 'tool' ? 'Argument sent.' : 'Ready.';
  },
  { latencyMs: latency },
);

const clock = new SimulatedClock();
const runtime = createRuntime({ model, agents: [debater('pro', 'for'), debater('con', 'against'), judge], clock, seed, projectAgentDir: false });
runtime.messages$.subscribe((message) => {
  const who = message.from.split(':')[1] ?? message.from;
  console.log(`${(message.sentAt / 1000).toFixed(1).padStart(6)}s  ${who.padEnd(5)} → ${(message.to.split(':')[1] ?? message.to).padEnd(5)} ${message.content}`);
});

console.log('Motion: agents should be built as actors.\n');
const pro = runtime.spawn('pro', 'Wait for the judge.');
const con = runtime.spawn('con', 'Wait for the judge.');
const verdict = runtime.run('judge', 'Judge the motion: agents should be built as actors.');
const idle = await runtime.runUntilIdle();
const result = await verdict;
runtime.stop(pro.id);
runtime.stop(con.id);
await runtime.runUntilIdle();

console.log(`\n${result.status === 'completed' ? result.output : `The judge failed: ${result.error?.message}`}`);
console.log(`Simulated time: ${(idle.at / 1000).toFixed(1)} s; debaters ended ${(await pro.result).status} and ${(await con.result).status}.\n`);
console.log(formatMetrics(runtime.metrics()));
await runtime.shutdown();
if (result.status !== 'completed') process.exitCode = 1;
