// troupe's web inspector in headless Chromium: a live run seen as it goes, an agent's statechart and conversation, the
// log's filters, a saved run scrubbed to its middle, and a page that stays responsive while 1,000 agents run.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, createWebInspector, defineAgent, openWebReplay, type TroupeEvent } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { RunModel } from '../../src/views/RunModel.js';
import { count } from '../../src/views/liveFormat.js';
import { collect, simulatedClock } from '../stubs.js';
import { launchBrowser, openPage, screenshot } from '../support/browser.js';
import { teamAgents, teamModel } from '../support/team.js';
import { eachTestTempDir } from '../support/tempDir.js';

const scratch = eachTestTempDir();
let browser: Browser;
// Chromium's start took more than the default 10 s hook timeout once, beside the rest of the suite on two cores.
beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

/** The state each agent row of the tree shows, by agent id. */
async function rowStates(page: Page): Promise<Record<string, string>> {
  return page.$$eval('[data-agent][data-state]', (rows) => Object.fromEntries(rows.map((row) => [row.getAttribute('data-agent'), row.getAttribute('data-state')])));
}

/**
 * Clicks the `nth` agent row and returns the agent it showed, both in one task of the page: while events flood in, the
 * tree redraws between any two steps of the test, so a row read first and clicked after may show another agent by then.
 */
async function clickRow(page: Page, nth: number): Promise<string | null> {
  const row = page.locator('.agent-row').nth(nth);
  await row.waitFor();
  return row.evaluate((element) => {
    (element as unknown as { click(): void }).click();
    return element.getAttribute('data-agent');
  });
}

describe('the web inspector in a browser', { timeout: 60_000 }, () => {
  it('shows a live run as it goes: agents appear and complete; an agent shows its statechart, figures and conversation; the log filters', async () => {
    const errors: string[] = [];
    const inspector = createWebInspector({ title: 'apples and pears' });
    const page = await openPage(browser, await inspector.url, errors);
    await page.getByTestId('status').filter({ hasText: 'live' }).waitFor();
    // Real time, each model turn 250 ms: the page watches the run go.
    const runtime = createRuntime({ agents: teamAgents, model: teamModel({ latencyMs: 250 }) });
    inspector.watch(runtime.events$);
    const result = runtime.run('lead', 'Compare apples and pears.');
    await page.locator('[data-state="running"]').first().waitFor();
    expect((await page.getByTestId('totals').textContent()) ?? '').toMatch(/running/);
    await screenshot(page, 'live-running');
    expect((await result).status).toBe('completed');
    await runtime.shutdown();
    await page.getByTestId('status').filter({ hasText: 'ended' }).waitFor();
    await page.getByTestId('totals').filter({ hasText: '3 agents · 0 running · 3 completed · 0 failed' }).waitFor();
    expect(Object.values(await rowStates(page))).toEqual(['completed', 'completed', 'completed']);

    // An agent: its statechart lit at its final state, its figures, its conversation.
    await page.locator('.agent-row', { hasText: 'worker#2' }).click();
    const panel = page.getByTestId('agent-panel');
    await panel.filter({ hasText: 'worker#2' }).waitFor();
    const chart = page.getByTestId('statechart');
    await chart.waitFor();
    expect(await chart.getAttribute('data-active')).toBe('agent.completed');
    expect(await page.locator('[data-state-id="agent.completed"]').getAttribute('class')).toMatch(/\bactive\b/);
    expect(await page.locator('[data-state-id="agent.running"]').getAttribute('class')).not.toMatch(/\blit\b/);
    const conversation = page.getByTestId('conversation');
    for (const text of ['Research pears.', '→ lookup', 'Notes on fruit: ripe in autumn.', '✉ to lead', 'Ripe in autumn.']) {
      await conversation.filter({ hasText: text }).waitFor();
    }
    expect(await page.getByTestId('agent-figures').textContent()).toMatch(/model calls3tokens/);
    await screenshot(page, 'live-agent');

    // The lead's turn of two delegations was planned: both in one stage.
    await page.locator('.agent-row', { hasText: 'lead' }).first().click();
    await page.getByTestId('plan').filter({ hasText: 'assign_task apples ‖ assign_task pears' }).waitFor();

    // The log: by type, by text, by agent.
    await page.getByLabel('filter by type').selectOption('tool.call');
    await page.getByTestId('log-count').filter({ hasText: /^6 of/ }).waitFor();
    expect(new Set(await page.locator('.log-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-type'))))).toEqual(new Set(['tool.call']));
    await page.getByLabel('filter by type').selectOption('');
    await page.getByLabel('filter by text').fill('send_message');
    await page.getByTestId('log-count').filter({ hasText: /^4 of/ }).waitFor();
    await page.getByLabel('filter by text').fill('');
    await page.getByLabel('filter by agent').fill('lead');
    const leadRows = await page.locator('.log-row').allTextContents();
    expect(leadRows.length).toBeGreaterThan(5);
    expect(leadRows.every((row) => row.includes('lead:'))).toBe(true);
    await page.getByRole('tab', { name: /Messages/ }).click();
    await page.getByTestId('message-count').filter({ hasText: '2 messages' }).waitFor();
    expect(await page.getByTestId('message-list').textContent()).toContain('worker → lead: Found the notes.');
    await screenshot(page, 'live-messages');
    expect(errors).toEqual([]);
    await page.close();
    await inspector.close();
  });

  it('replays a saved run: scrubbed to its middle, the tree, statechart and charts show that moment', async () => {
    const file = join(scratch.path, 'run.jsonl');
    const runtime = createRuntime({ agents: teamAgents, model: teamModel({ latencyMs: 100 }), clock: simulatedClock(), seed: 9, record: file });
    const events: TroupeEvent[] = collect(runtime.events$);
    runtime.spawn('lead', 'Compare apples and pears.');
    await runtime.runUntilIdle();
    await runtime.shutdown();

    const errors: string[] = [];
    const replay = await openWebReplay(file);
    const page = await openPage(browser, await replay.url, errors);
    await page.getByTestId('position').filter({ hasText: `${events.length} / ${events.length} events` }).waitFor();
    await page.getByTestId('status').filter({ hasText: 'ended' }).waitFor();

    const middle = events.findIndex((event) => event.type === 'tool.call' && event.tool === 'lookup') + 1;
    const expected = new RunModel();
    for (const event of events.slice(0, middle)) expected.apply(event);
    await page.getByTestId('slider').fill(String(middle));
    await page.getByTestId('position').filter({ hasText: `${middle} / ${events.length} events` }).waitFor();
    const states = await rowStates(page);
    const lead = expected.tree.roots[0]!;
    expect(states).toEqual(Object.fromEntries([lead, ...lead.children].map((node) => [node.id, node.state])));
    expect(Object.values(states)).toContain('running');
    await page.locator(`.agent-row[data-agent="${lead.id}"]`).click();
    await page.getByTestId('statechart').and(page.locator(`[data-active="agent.${expected.stateOf(lead.id)}"]`)).waitFor();
    expect(expected.stateOf(lead.id)).toBe('running.acting.waitingForAgents');
    await page.getByTestId('chart-tokens').filter({ hasText: `tokens ${expected.series.tokens.at(-1)!.toLocaleString('en-US')}` }).waitFor();
    await screenshot(page, 'replay-middle');

    // Back to the end: everything completed again.
    await page.getByRole('button', { name: 'end' }).click();
    await page.getByTestId('position').filter({ hasText: `${events.length} / ${events.length} events` }).waitFor();
    expect(new Set(Object.values(await rowStates(page)))).toEqual(new Set(['completed']));
    expect(errors).toEqual([]);
    await page.close();
    await replay.close();
  });

  it('starts afresh when it reconnects to another run served on the same port, rather than adding that run to the one it showed', async () => {
    /** The events of one run of the team, in simulated time. */
    const runOnce = async (seed: number, task: string): Promise<TroupeEvent[]> => {
      const runtime = createRuntime({ agents: teamAgents, model: teamModel({ latencyMs: 100 }), clock: simulatedClock(), seed });
      const events: TroupeEvent[] = collect(runtime.events$);
      runtime.spawn('lead', task);
      await runtime.runUntilIdle();
      await runtime.shutdown();
      return events;
    };
    const first = await runOnce(1, 'Compare apples and pears.');
    const second = await runOnce(2, 'Compare plums and figs.');
    const errors: string[] = [];
    // The first run's server stops before its run ended (its process was killed): the page keeps trying to reconnect.
    const before = createWebInspector({ title: 'first' });
    for (const event of first.slice(0, 20)) before.push(event);
    const page = await openPage(browser, await before.url, errors);
    await page.getByTestId('position').filter({ hasText: '20 / 20 events' }).waitFor();
    const port = Number(new URL(await before.url).port);
    await before.close();
    // Another run on the same port: the page reconnects to it and shows that run alone.
    const after = createWebInspector({ title: 'second', port });
    for (const event of second) after.push(event);
    after.end();
    await page.getByTestId('status').filter({ hasText: 'ended' }).waitFor();
    await page.getByTestId('position').filter({ hasText: `${second.length} / ${second.length} events` }).waitFor();
    const agents = [...new Set(second.map((event) => event.agentId))].sort();
    expect(Object.keys(await rowStates(page)).sort()).toEqual(agents);
    await page.getByTestId('log-count').filter({ hasText: `${second.length} of ${second.length} events` }).waitFor();
    expect(await page.getByTestId('event-log').textContent()).not.toContain('Compare apples and pears.');
    expect(errors.filter((error) => !/ERR_CONNECTION_REFUSED/.test(error))).toEqual([]);
    await page.close();
    await after.close();
  });

  it('counts one agent as one agent, in the header and over the tree', async () => {
    const file = join(scratch.path, 'one.jsonl');
    const solo = defineAgent({ name: 'solo', description: 'Answers.', systemPrompt: 'Answer.' });
    const runtime = createRuntime({ agents: [solo], model: new ScriptedModel(['Done.']), clock: simulatedClock(), record: file });
    await runtime.run('solo', 'Answer once.');
    await runtime.shutdown();
    const errors: string[] = [];
    const replay = await openWebReplay(file);
    const page = await openPage(browser, await replay.url, errors);
    await page.getByTestId('status').filter({ hasText: 'ended' }).waitFor();
    expect(await page.getByTestId('run-totals').textContent()).toMatch(/^1 agent · \d+ tokens · \$0 · 0 tool calls · /);
    expect(await page.getByTestId('totals').textContent()).toBe('1 agent · 0 running · 1 completed · 0 failed');
    expect(errors).toEqual([]);
    await page.close();
    await replay.close();
  });

  it('stays responsive while 1,000 agents run: the tree renders the rows in view, and a click answers', async () => {
    const AGENTS = 1_000;
    const errors: string[] = [];
    const inspector = createWebInspector({ title: 'a thousand' });
    const page = await openPage(browser, await inspector.url, errors);
    const helper = defineAgent({ name: 'helper', description: 'Answers.', systemPrompt: 'Answer.' });
    // The last 50 calls wait for the test to let them answer: the run is still going when the click is answered, on a
    // machine of any speed.
    let finish = () => {};
    const held = new Promise<void>((resolve) => (finish = resolve));
    const model = new ScriptedModel(async (_request, call) => (call < AGENTS - 50 ? 'Done.' : held.then(() => 'Done.')), { latencyMs: 40 });
    const runtime = createRuntime({ agents: [helper], model, maxParallel: 50 });
    inspector.watch(runtime.events$);
    let finished = 0;
    const results = Array.from({ length: AGENTS }, (_, index) =>
      runtime.run('helper', `Task ${index}.`).then((result) => {
        finished += 1;
        return result;
      }),
    );
    // While the run goes on: rows appear (only those in view are drawn), and a click on one selects it.
    await page.locator('.agent-row').nth(20).waitFor();
    const id = await clickRow(page, 5);
    await page.locator(`[data-testid="agent-panel"][data-agent="${id}"]`).waitFor();
    expect(finished).toBeLessThan(AGENTS);
    await screenshot(page, 'thousand-running');
    finish();
    await Promise.all(results);
    await runtime.shutdown();
    await page.getByTestId('totals').filter({ hasText: `${count(AGENTS)} agents · 0 running · ${count(AGENTS)} completed` }).waitFor();
    expect(await page.locator('.agent-row').count()).toBeLessThan(100);
    await page.getByTestId('log-count').filter({ hasText: `${count(AGENTS * 5)} of ${count(AGENTS * 5)} events` }).waitFor();
    await screenshot(page, 'thousand-ended');
    expect(errors).toEqual([]);
    await page.close();
    await inspector.close();
  });

  it('keeps answering while a run sends it 10,000 events a second', async () => {
    // 30,000 events of a real run (simulated time), then fed to a live page at 1,000 every 100 ms.
    const runtime = createRuntime({ agents: teamAgents, model: teamModel({ latencyMs: 10 }), clock: simulatedClock(), seed: 4, maxParallel: 200 });
    const events: TroupeEvent[] = collect(runtime.events$);
    while (events.length < 30_000) {
      for (let index = 0; index < 200; index += 1) runtime.spawn('lead', `Compare fruit ${index}.`);
      await runtime.runUntilIdle();
    }
    await runtime.shutdown();
    const errors: string[] = [];
    const inspector = createWebInspector({ title: 'a flood' });
    const page = await openPage(browser, await inspector.url, errors);
    let fed = 0;
    const feeding = (async () => {
      for (; fed < events.length; fed += 1_000) {
        for (const event of events.slice(fed, fed + 1_000)) inspector.push(event);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      inspector.end();
    })();
    await page.locator('.agent-row').nth(10).waitFor();
    const id = await clickRow(page, 3);
    await page.locator(`[data-testid="agent-panel"][data-agent="${id}"]`).waitFor();
    await page.getByLabel('filter by type').selectOption('agent.completed');
    expect(fed).toBeLessThan(events.length); // all of that while the flood went on
    await feeding;
    await page.getByTestId('position').filter({ hasText: `${count(events.length)} / ${count(events.length)} events` }).waitFor();
    const completed = events.filter((event) => event.type === 'agent.completed').length;
    await page.getByTestId('log-count').filter({ hasText: `${count(completed)} of ${count(events.length)} events` }).waitFor();
    await screenshot(page, 'flood-ended');
    expect(errors).toEqual([]);
    await page.close();
    await inspector.close();
  });
});
