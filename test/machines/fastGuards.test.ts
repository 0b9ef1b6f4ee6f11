// The agent machine checks a reply and a batch's end against one guard for the common case before its chain of guards
// (`toolTurnWithinBudget`, `parksAfterBatch`, `thinksAfterBatch`). Each must decide exactly what the chain after it
// would: here every combination of what the guards read is decided both ways.
import { describe, expect, it } from 'vitest';
import type { ModelTurn } from '../../src/actors/callModel.js';
import { agentMachine } from '../../src/machines/agentMachine.js';
import { batchEndGuards, budgetGuards, mailGuards, slotGuards } from '../../src/machines/agentSetup.js';
import type { AgentContext, AgentEvent } from '../../src/machines/agentTypes.js';

type Guard = (args: { context: AgentContext; event: AgentEvent }, params?: unknown) => boolean;
const named = agentMachine.implementations.guards as unknown as Record<string, Guard>;

/** Every combination of the values given for each key. */
function combinations<T extends Record<string, readonly unknown[]>>(choices: T): { [K in keyof T]: T[K][number] }[] {
  let all: Record<string, unknown>[] = [{}];
  for (const [key, values] of Object.entries(choices)) all = all.flatMap((partial) => values.map((value) => ({ ...partial, [key]: value })));
  return all as { [K in keyof T]: T[K][number] }[];
}

function contextOf(options: { turns: number; resident: boolean; output: string | null; required: string[]; holdsSlot: boolean; maxTokens?: number }): AgentContext {
  return {
    input: { id: 'agent:a:1', maxTurns: 3, resident: options.resident, ...(options.maxTokens === undefined ? {} : { budget: { maxTokens: options.maxTokens } }) },
    messages: [],
    turns: options.turns,
    own: { inputTokens: 10, outputTokens: 10, costUsd: 0, modelCalls: 1, toolCalls: 0, toolErrors: 0 },
    startedAt: 0,
    output: options.output,
    failure: null,
    waitingForPeople: 0,
    holdsSlot: options.holdsSlot,
    approval: null,
    required: options.required,
  } as unknown as AgentContext;
}

describe("the agent machine's one-guard common cases", () => {
  it('end a batch where the chain of guards would: parked, thinking again, or neither', () => {
    const cases = combinations({
      finish: [undefined, {}, { answer: 'done' }, { answer: ' ' }],
      waiting: [undefined, false, true],
      mail: [false, true],
      holds: [false, true],
      turns: [1, 3],
      resident: [false, true],
      output: [null, '', 'earlier'],
      required: [[], ['save']],
    });
    let parked = 0;
    let thinking = 0;
    for (const item of cases) {
      const ready = () => item.mail;
      const holds = () => item.holds;
      const guards: Record<string, Guard> = { ...named, ...mailGuards(ready), ...slotGuards(holds), ...batchEndGuards(ready, holds) };
      const context = contextOf({ turns: item.turns, resident: item.resident, output: item.output, required: item.required, holdsSlot: item.holds });
      const event = {
        type: 'TOOLS.DONE',
        messages: [],
        ended: 1,
        failed: 0,
        ...(item.waiting === undefined ? {} : { waiting: item.waiting }),
        ...(item.finish === undefined ? {} : { finish: item.finish }),
      } as AgentEvent;
      const chain = [
        'finishesTooEarlyOnLastTurn',
        'finishesTooEarlyWithSlot',
        'finishesTooEarly',
        'finishesWithAnswer',
        'finishes',
        'residentOutOfTurnsWithAnswer',
        'turnsUsed',
        'waitsWithoutMail',
        'holdsSlot',
      ].find((name) => guards[name]!({ context, event })) ?? 'otherwise';
      const fast = guards.parksAfterBatch!({ context, event }) ? 'waitsWithoutMail' : guards.thinksAfterBatch!({ context, event }) ? 'holdsSlot' : undefined;
      if (fast !== undefined) expect({ item, decided: fast }).toEqual({ item, decided: chain });
      if (chain === 'waitsWithoutMail' || chain === 'holdsSlot') expect({ item, decided: fast }).toEqual({ item, decided: chain });
      if (fast === 'waitsWithoutMail') parked += 1;
      if (fast === 'holdsSlot') thinking += 1;
    }
    expect(parked).toBeGreaterThan(0);
    expect(thinking).toBeGreaterThan(0);
  });

  it('send a reply to acting where the chain of budget guards would', () => {
    const cases = combinations({
      toolCalls: [0, 2],
      content: ['', 'an answer'],
      resident: [false, true],
      output: [null, 'earlier'],
      crosses: [false, true],
      maxTokens: [undefined, 25, 1_000],
    });
    let acting = 0;
    for (const item of cases) {
      const guards = { ...named, ...budgetGuards(() => (item.crosses ? 'crossed' : undefined)) } as unknown as Record<string, Guard>;
      const context = contextOf({ turns: 1, resident: item.resident, output: item.output, required: [], holdsSlot: true, ...(item.maxTokens === undefined ? {} : { maxTokens: item.maxTokens }) });
      const turn: ModelTurn = {
        content: item.content,
        toolCalls: Array.from({ length: item.toolCalls }, (_, at) => ({ id: `c${at}`, name: 'read_file', arguments: '{}' })),
        inputTokens: 5,
        outputTokens: 5,
        model: 'scripted',
        costUsd: 0,
        durationMs: 0,
      };
      const event = { type: 'MODEL.DONE', output: turn } as AgentEvent;
      const chain = ['plainAnswer', 'residentOverBudget', 'overBudget', 'wantsTools'].find((name) => guards[name]!({ context, event }, turn)) ?? 'otherwise';
      const fast = guards.toolTurnWithinBudget!({ context, event }, turn);
      expect({ item, acting: fast }).toEqual({ item, acting: chain === 'wantsTools' });
      if (fast) acting += 1;
    }
    expect(acting).toBeGreaterThan(0);
  });
});
