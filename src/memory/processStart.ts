/**
 * When a process of this machine started, to tell a process from an earlier one that had its pid (pids are reused,
 * and after a reboot they start over): read from `/proc` on Linux. Elsewhere, or where `/proc` reads otherwise than
 * expected, it cannot be told, and a running pid is taken for the same process.
 */
import { readFileSync } from 'node:fs';

/**
 * Clock ticks per second of `/proc/<pid>/stat`'s start time (`USER_HZ`): 100 on the Linux architectures Node runs on.
 * It is checked against this process's own start before it is trusted (see {@link processStartTime}).
 */
const TICKS_PER_SECOND = 100;

/** How far apart two readings of one process's start may be (the boot time is read to the second). */
export const START_TOLERANCE_MS = 3_000;

/** The boot time in ms since the epoch, read once; undefined where there is no `/proc/stat`. */
let bootTime: number | undefined | null = null;

function readBootTime(): number | undefined {
  if (bootTime === null) {
    try {
      const line = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
      bootTime = line ? Number(line[1]) * 1000 : undefined;
    } catch {
      bootTime = undefined;
    }
  }
  return bootTime;
}

/** The start of `pid` as `/proc` says it, in ms since the epoch; undefined when it cannot be read. */
function readStart(pid: number): number | undefined {
  const boot = readBootTime();
  if (boot === undefined) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // `pid (command) state ppid …`: the command may hold spaces and parentheses, so fields are counted after the last `)`.
  // The start time is field 22 of the line, so the 20th after the command.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[19]);
  return Number.isFinite(ticks) ? boot + (ticks * 1000) / TICKS_PER_SECOND : undefined;
}

/** Whether `/proc` gives this process the start Node gives it: if not, no reading of it is trusted. */
let trusted: boolean | undefined;

/**
 * When the process `pid` of this machine started, in ms since the epoch (to within {@link START_TOLERANCE_MS}), or
 * undefined when it cannot be told: not Linux, no such process, or a `/proc` that does not give this process's own
 * start as Node does.
 */
export function processStartTime(pid: number): number | undefined {
  trusted ??= (() => {
    const own = readStart(process.pid);
    return own !== undefined && Math.abs(own - (Date.now() - process.uptime() * 1000)) <= START_TOLERANCE_MS;
  })();
  return trusted ? readStart(pid) : undefined;
}
