import { Command } from 'commander';
import ms from 'ms';
import { SessionStore, type SessionRecord } from '../../memory/SessionStore.js';
import type { ChatMessage } from '../../models/Model.js';
import { clip, counted, firstLine, formatDuration, formatFigures } from '../../views/liveFormat.js';
import { CommandError } from '../CommandError.js';
import { addRunOptions, DEFAULT_STORE, discard, existingStore, refusedAgentFile, requireModel, runtimeFor, type RunFlags } from '../runOptions.js';
import { table } from '../table.js';
import { watchRun } from '../watchRun.js';

interface StoreFlags {
  store?: string;
  json?: boolean;
}

/**
 * `troupe sessions list | show ID | resume ID --task TEXT | cleanup AGE`: the sessions a store keeps, from earlier runs.
 */
export function sessionsCommand(): Command {
  const sessions = new Command('sessions').description('list, show and resume the sessions of earlier runs').addHelpText(
    'after',
    `
Every run keeps each agent's record and conversation in a store (--store FILE, default ${DEFAULT_STORE}).

Examples:
  $ troupe sessions list
  $ troupe sessions show agent:researcher:V1StGXR8
  $ troupe sessions resume agent:researcher:V1StGXR8 --task "Now compare it with 1.0." --base-url http://127.0.0.1:11434/v1
  $ troupe sessions cleanup 30d`,
  );
  sessions
    .command('list')
    .description('list the sessions: id, agent, state, start and task (sub-agents under their caller)')
    .option('--store <file>', `the store to read (default ${DEFAULT_STORE})`)
    .option('--json', 'print them as JSON')
    .addHelpText('after', '\nExamples:\n  $ troupe sessions list\n  $ troupe sessions list --store history.json --json')
    .action((flags: StoreFlags) => listSessions(flags));
  sessions
    .command('show')
    .description('show one session: its record, figures and conversation')
    .argument('<id>', 'the session id, as `sessions list` shows it')
    .option('--store <file>', `the store to read (default ${DEFAULT_STORE})`)
    .option('--json', 'print it as JSON')
    .addHelpText('after', '\nExamples:\n  $ troupe sessions show agent:researcher:V1StGXR8\n  $ troupe sessions show agent:researcher:V1StGXR8 --store history.json --json')
    .action((id: string, flags: StoreFlags) => showSession(id, flags));
  const resume = sessions
    .command('resume')
    .description('continue an ended session with a new task, with its whole conversation, watching it live')
    .argument('<id>', 'the session id');
  addRunOptions(resume, 'required')
    .addHelpText(
      'after',
      '\nExamples:\n  $ troupe sessions resume agent:researcher:V1StGXR8 --task "Now compare it with 1.0."\n' +
        '  $ troupe sessions resume agent:researcher:V1StGXR8 --task "Go on." --agents team/ --base-url http://127.0.0.1:11434/v1',
    )
    .action((id: string, flags: RunFlags) => resumeSession(id, flags));
  sessions
    .command('cleanup')
    .description('remove the sessions that ended longer ago than AGE, with their conversations (not those still running)')
    .argument('<age>', 'how old a session must be, with its unit: 30d, 12h, 45m, 90s, 500ms')
    .option('--store <file>', `the store to clean (default ${DEFAULT_STORE})`)
    .option('--json', 'print the ids removed as JSON')
    .addHelpText('after', '\nExamples:\n  $ troupe sessions cleanup 30d\n  $ troupe sessions cleanup 12h --store history.json --json')
    .action((age: string, flags: StoreFlags) => cleanupSessions(age, flags));
  return sessions;
}

async function cleanupSessions(age: string, flags: StoreFlags): Promise<void> {
  const maxAgeMs = durationMs(age);
  const store = new SessionStore(existingStore(flags.store, 'use'));
  const removed = await store.cleanup(maxAgeMs);
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(removed)}\n`);
    return;
  }
  const name = flags.store ?? DEFAULT_STORE;
  process.stdout.write(
    removed.length === 0
      ? `No session in ${name} ended more than ${age} ago.\n`
      : `Removed ${removed.length} session${removed.length === 1 ? '' : 's'} from ${name}: ${removed.join(', ')}\n`,
  );
}

/**
 * An age as the command takes it (`30d`, `12h`, `45m`, `90s`, `500ms`), in ms; a CommandError if it is none. A number
 * without a unit is refused: `ms` reads it as milliseconds, so `cleanup 30` meant as days would remove every session.
 */
function durationMs(age: string): number {
  if (/^\s*[\d.]+\s*$/.test(age)) throw new CommandError(`"${age}" has no unit: give one such as ${age.trim()}d, ${age.trim()}h or ${age.trim()}m`);
  let parsed: number | undefined;
  try {
    parsed = ms(age as ms.StringValue) as number | undefined;
  } catch {
    parsed = undefined; // ms throws for an empty text
  }
  if (typeof parsed !== 'number' || !Number.isFinite(parsed) || parsed < 0) {
    throw new CommandError(`"${age}" is not an age: give one such as 30d, 12h, 45m or 90s`);
  }
  return parsed;
}

async function listSessions(flags: StoreFlags): Promise<void> {
  const store = new SessionStore(existingStore(flags.store));
  const list = await store.list();
  // Records this troupe cannot read are left out, and said so: a list that only looks complete hides them.
  const unlisted = await store.unlisted();
  if (unlisted.length > 0) {
    const which = unlisted.map(({ id, why }) => `${id}, ${why}`).join('; ');
    process.stderr.write(`troupe: ${unlisted.length} session${unlisted.length === 1 ? '' : 's'} not listed, left in the store as they are: ${which}\n`);
  }
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    return;
  }
  if (list.length === 0) {
    process.stdout.write(`No sessions in ${flags.store ?? DEFAULT_STORE}.\n`);
    return;
  }
  const rows = inTreeOrder(list).map(({ session, depth }) => [
    `${'  '.repeat(depth)}${session.id}`,
    session.agentType,
    session.state,
    localTime(session.startTime),
    clip(firstLine(session.taskDescription), 60),
  ]);
  process.stdout.write(`${table([['ID', 'AGENT', 'STATE', 'STARTED', 'TASK'], ...rows])}\n`);
}

/** Sessions with each one's sub-agents right under it, oldest first at every level. */
function inTreeOrder(list: readonly SessionRecord[]): { session: SessionRecord; depth: number }[] {
  const ids = new Set(list.map((session) => session.id));
  const children = new Map<string | null, SessionRecord[]>();
  for (const session of list) {
    const parent = session.parentConversationId !== null && ids.has(session.parentConversationId) ? session.parentConversationId : null;
    children.set(parent, [...(children.get(parent) ?? []), session]);
  }
  const ordered: { session: SessionRecord; depth: number }[] = [];
  const visit = (session: SessionRecord, depth: number) => {
    ordered.push({ session, depth });
    for (const child of children.get(session.id) ?? []) visit(child, depth + 1);
  };
  for (const root of children.get(null) ?? []) visit(root, 0);
  return ordered;
}

async function showSession(id: string, flags: StoreFlags): Promise<void> {
  const sessions = new SessionStore(existingStore(flags.store));
  const session = await sessions.get(id);
  if (!session) throw await unknownSession(sessions, id, flags.store);
  const conversation = (await sessions.conversation(id)) ?? [];
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ ...session, conversation }, null, 2)}\n`);
    return;
  }
  const fields = [
    ['agent:', session.agentType],
    ['state:', session.state + (session.reason ? ` (${session.reason})` : '')],
    ['parent:', session.parentConversationId ?? '-'],
    ['started:', localTime(session.startTime)],
    ['ended:', session.endTime === null ? '-' : localTime(session.endTime)],
    ['task:', firstLine(session.taskDescription, 200)],
  ];
  const own = session.metrics?.own;
  if (own) {
    const tokens = own.inputTokens + own.outputTokens;
    fields.push(['figures:', `${formatFigures({ toolCalls: own.toolCalls, tokens, costUsd: own.costUsd })} • ${formatDuration(own.durationMs)}`]);
  }
  if (session.result !== null) fields.push(['result:', firstLine(session.result, 200)]);
  if (session.error !== null) fields.push(['error:', firstLine(`${session.error.code}: ${session.error.message}`, 200)]);
  const lines = [session.id, table(fields), '', `Conversation (${counted(conversation.length, 'message')}):`, ...conversation.map(messageLine)];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * Why a session cannot be shown or resumed: its id is not in the store, or its record is there but is not one this
 * troupe reads (as `sessions list` says on stderr); then it is left as it is.
 */
async function unknownSession(sessions: SessionStore, id: string, store: string | undefined): Promise<CommandError> {
  const name = store ?? DEFAULT_STORE;
  const unread = (await sessions.unlisted()).find((record) => record.id === id);
  if (unread) return new CommandError(`cannot read session "${id}" in ${name}: ${unread.why}; it was left as it is`);
  return new CommandError(`unknown session "${id}" in ${name} (troupe sessions list shows them)`);
}

/** `2025-03-01 14:05:09`, in the local time zone. */
function localTime(ms: number): string {
  const date = new Date(ms);
  const two = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

/** One message of a conversation, on one line. */
function messageLine(message: ChatMessage): string {
  switch (message.role) {
    case 'assistant': {
      const calls = (message.toolCalls ?? []).map((call) => `→ ${call.name} ${clip(firstLine(call.arguments), 60)}`);
      return `  assistant: ${[firstLine(message.content, 160), ...calls].filter(Boolean).join('  ')}`;
    }
    case 'tool':
      return `  tool${message.isError ? ' (error)' : ''}: ${firstLine(message.content, 160)}`;
    default:
      return `  ${message.role}: ${firstLine(message.content, 160)}`;
  }
}

async function resumeSession(id: string, flags: RunFlags): Promise<void> {
  existingStore(flags.store);
  const task = flags.task!;
  const runtime = await runtimeFor(flags, { model: await requireModel(flags) });
  const session = await runtime.sessions.get(id);
  if (!session) {
    await discard(runtime);
    throw await unknownSession(new SessionStore(existingStore(flags.store)), id, flags.store);
  }
  if (!runtime.agentNames.includes(session.agentType)) {
    await discard(runtime);
    throw refusedAgentFile(runtime, session.agentType) ?? new CommandError(
      `the session's agent "${session.agentType}" is not defined here: give its file with --agents DIR (an agent a scenario ` +
        `defines in code is resumed from code, with runtime.resume)`,
    );
  }
  await watchRun(runtime, flags, async () => (await runtime.resume(id, task)).result);
}
