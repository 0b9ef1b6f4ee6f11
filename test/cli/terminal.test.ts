// The live tree in a real terminal: `troupe run` inside tmux (a pseudo-terminal of its own, on a private socket),
// read back with capture-pane. tmux must be installed (.ci/run installs it).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root, tsxLoader } from '../support/cli.js';
import { tempDir } from '../support/tempDir.js';

const scratch = tempDir();
const socket = join(scratch.path, 'tmux.sock');
const tmux = (...args: string[]) =>
  execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8', env: { ...process.env, TERM: 'xterm-256color' } });

afterAll(() => {
  try {
    tmux('kill-server');
  } catch {
    // no server left to kill
  }
  scratch.remove();
});

/** Reads the pane until `done` matches it, or gives up after `timeoutMs`. */
async function waitForPane(done: RegExp, timeoutMs = 40_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pane = tmux('capture-pane', '-p', '-J', '-S', '-200');
    if (done.test(pane) || Date.now() > deadline) return pane;
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
}

describe('troupe run in a terminal', () => {
  it('redraws a live tree in place, then leaves the final tree and the result', async () => {
    tmux('new-session', '-d', '-x', '110', '-y', '40', '-c', root, 'env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u NO_COLOR bash --norc --noprofile');
    const store = join(scratch.path, 'sessions.json');
    tmux('send-keys', `clear; node --import ${tsxLoader} src/cli/main.ts run examples/scenario.ts --store ${store}; echo "exit=$?"`, 'Enter');

    // While it runs (a second or so of scripted latencies), a frame shows agents at work.
    const live = await waitForPane(/Working…|^exit=\d+$/m);
    expect(live).toMatch(/^ *Working… [\d.]+m?s • \d+ calls? • \d+ tokens? • /m);
    expect(live).toContain('► planner (Plan a weekend in Lisbon for two.)');

    const pane = await waitForPane(/^exit=\d+$/m);

    expect(pane).toMatch(/^exit=0$/m);
    const lines = pane.split('\n').map((line) => line.trimEnd());
    // Drawn in place: each agent's header once, not once per frame.
    expect(lines.filter((line) => line === '► planner (Plan a weekend in Lisbon for two.)')).toHaveLength(1);
    expect(lines.filter((line) => line === '  ► meteorologist (Weekend weather in Lisbon)')).toHaveLength(1);
    expect(lines.filter((line) => line === '  ► accountant (Trip budget in euros)')).toHaveLength(1);
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}✓ forecast \{"city":"Lisbon"\} \d+ms$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}✗ convert \{"amount":310,"currency":"US\$"\} \d+ms: Unknown currency US\$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}Done [\d.]+m?s • 3 calls • \d+ tokens • /));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}Done [\d.]+m?s • 2 calls • \d+ tokens • /));
    expect(lines).toContainEqual(expect.stringMatching(/^3 agents • 3 done • 6 calls • /));
    expect(pane).toContain('Lisbon it is. Pack sunglasses and an umbrella');
    expect(pane).not.toContain('Working…'); // the last frame shows every agent done
  });
});
