// Messages seen by an inspector: each one enters the supervisor as `MESSAGE.SEND` (from the sending agent's actor) and
// leaves it as a `MESSAGE` event to every receiver (busy or waiting), so the actor system shows who talked to whom.
import type { InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createRuntime } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { resident, simulatedClock } from '../stubs.js';

interface Seen {
  type: string;
  from: string | undefined;
  to: string;
  messageId?: string;
}

/** The id of an actor in the system: its systemId (an agent's own id; its actor id is its kind, `agent:<name>`). */
const idOf = (actor: unknown) => {
  const ref = actor as { id?: string; systemId?: string } | undefined;
  return ref?.systemId ?? ref?.id;
};

describe('messages under an inspector', () => {
  it('shows every message passing from the supervisor to each receiver, waiting or not', async () => {
    const seen: Seen[] = [];
    const inspect = (event: InspectionEvent) => {
      if (event.type !== '@xstate.event') return;
      const type = event.event.type;
      if (type !== 'MESSAGE' && type !== 'MESSAGE.SEND') return;
      seen.push({
        type,
        from: idOf(event.sourceRef),
        to: idOf(event.actorRef) ?? '',
        messageId: (event.event as { message?: { id: string } }).message?.id,
      });
    };
    const clock = simulatedClock();
    // `busy` thinks for a long time after its first answer, so messages reach it while it does not wait.
    const model = new ScriptedModel(
      (request) => {
        const last = request.messages[request.messages.length - 1]!;
        if (request.agentName === 'relay' && last.role === 'user' && last.content.startsWith('[message')) {
          return callTools(toolCall('publish', { topic: 'news', content: 'relayed' }, `p${request.messages.length}`));
        }
        return 'ok';
      },
      { latencyMs: (request) => (request.agentName === 'busy' && request.messages.length > 2 ? 10_000 : 10) },
    );
    const runtime = createRuntime({
      model,
      clock,
      inspect,
      agents: [resident('relay', ['publish']), resident('busy', [], { subscribe: ['news'] }), resident('idle', [], { subscribe: ['news'] })],
      projectAgentDir: false,
    });
    const relay = runtime.spawn('relay', 'Relay what you hear.');
    const busy = runtime.spawn('busy', 'Listen.');
    const idle = runtime.spawn('idle', 'Listen.');
    await runtime.runUntilIdle();
    await runtime.send(busy.id, 'keep thinking'); // wakes busy into a long turn
    await runtime.send('relay', 'pass it on');
    await runtime.runUntilIdle();

    const sends = seen.filter((entry) => entry.type === 'MESSAGE.SEND');
    expect(sends.every((entry) => entry.to === 'supervisor')).toBe(true);
    expect(sends).toHaveLength(3); // to busy, to relay, relay's publish
    // Code's messages come in from outside; an agent's leave through the agent's own actor.
    expect(sends.map((entry) => entry.from)).toEqual([undefined, undefined, relay.id]);
    const deliveries = seen.filter((entry) => entry.type === 'MESSAGE');
    expect(deliveries.every((entry) => entry.from === 'supervisor')).toBe(true);
    const published = sends[2]!.messageId;
    // The publish reached both subscribers as events, though `busy` was thinking and could not read it yet.
    expect(deliveries.filter((entry) => entry.messageId === published).map((entry) => entry.to).sort()).toEqual([busy.id, idle.id].sort());
    expect(deliveries.map((entry) => entry.to)).toContain(relay.id);
    for (const id of [relay.id, busy.id, idle.id]) runtime.stop(id);
    await runtime.shutdown();
  });
});
