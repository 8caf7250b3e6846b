import { hostname } from 'node:os';
import { join } from 'node:path';
import { open, readFile, stat, unlink } from 'node:fs/promises';
import type { Logger } from 'pino';

/** Name of the lock file inside the folder. */
export const LOCK_FILE = 'data-dir.lock';

/** What a lock file says about its holder. */
export interface LockOwner {
  readonly pid: number;
  readonly hostname: string;
  /** When the holder process started (`performance.timeOrigin`, ms since the epoch). */
  readonly processStartedAt: number;
  /** When it took the lock, ISO 8601. */
  readonly lockedAt: string;
  /**
   * When the holder process started, as the kernel counts it: `/proc/<pid>/stat` field 22
   * (clock ticks since boot). Linux only; absent in locks of older versions.
   */
  readonly processStartTicks?: number;
  /** `/proc/sys/kernel/random/boot_id` of the machine the holder ran on (Linux only). */
  readonly bootId?: string;
}

/** What the kernel says about a pid: `/proc/<pid>/stat`. */
export interface ProcessStat {
  /** Field 3: `R`, `S`, `D`, … `Z` is a zombie (exited, not yet reaped), `X` dead. */
  readonly state: string;
  /** Field 22: start time, clock ticks since boot. */
  readonly startTicks: number;
  /** The same start time in ms since the epoch (boot time + ticks); undefined when unknown. */
  readonly startedAtMs?: number;
}

/** Thrown when another live process holds the folder. */
export class DataDirInUseError extends Error {
  readonly code = 'ERR_DATA_DIR_IN_USE';
  constructor(
    message: string,
    readonly dir: string,
    readonly owner?: LockOwner,
  ) {
    super(message);
    this.name = 'DataDirInUseError';
  }
}

/** Options of `acquireDirLock`. */
export interface DirLockOptions {
  readonly logger: Logger;
  /** This process, as it writes itself into the lock. @default the running process */
  readonly self?: Omit<LockOwner, 'lockedAt'>;
  /** Whether a process is alive. @default `process.kill(pid, 0)` */
  readonly isAlive?: (pid: number) => boolean;
  /** The kernel's view of a live pid; undefined where there is no `/proc`. @default `readProcessStat` */
  readonly processStat?: (pid: number) => Promise<ProcessStat | undefined>;
  /** Boot id of this machine; undefined where unknown. @default `/proc/sys/kernel/random/boot_id` */
  readonly bootId?: () => Promise<string | undefined>;
  /** A lock file that holds no readable owner is taken over once older than this, ms. @default 10000 */
  readonly unreadableAfterMs?: number;
}

/** A held lock. */
export interface DirLock {
  readonly path: string;
  /** Deletes the lock file (if it is still ours). Idempotent. */
  release(): Promise<void>;
}

/** `kill(pid, 0)`: no signal sent, only the existence check. EPERM = alive, under another user. */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Clock ticks per second of `/proc` times (`USER_HZ`): 100 on every Linux architecture node runs on. */
const USER_HZ = 100;

/**
 * A lock of an older version records only `processStartedAt` (ms, taken by node shortly after the
 * kernel started the process). The pid's kernel start time is judged another process only when
 * it differs by more than this: node's own start-up, the 1 s resolution of the boot time and
 * wall-clock adjustments since boot all fit inside, and a pid is not reused that fast.
 */
const START_TIME_SLACK_MS = 10_000;

async function readOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Reads `/proc/<pid>/stat` (and the boot time from `/proc/stat`); undefined without `/proc` or pid. */
export async function readProcessStat(pid: number): Promise<ProcessStat | undefined> {
  const text = await readOrUndefined(`/proc/${pid}/stat`);
  if (text === undefined) return undefined;
  // Field 2 (comm) is in parentheses and may itself hold spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const startTicks = Number(fields[19]);
  if (!state || !Number.isSafeInteger(startTicks)) return undefined;
  const btime = /^btime (\d+)$/m.exec((await readOrUndefined('/proc/stat')) ?? '');
  return {
    state,
    startTicks,
    ...(btime ? { startedAtMs: Number(btime[1]) * 1000 + (startTicks * 1000) / USER_HZ } : {}),
  };
}

async function readBootId(): Promise<string | undefined> {
  return (await readOrUndefined('/proc/sys/kernel/random/boot_id'))?.trim() || undefined;
}

/** Why a live pid is not the lock holder any more, or undefined when it may well be. */
function notTheHolder(owner: LockOwner, stat: ProcessStat | undefined): string | undefined {
  if (!stat) return undefined;
  if (stat.state === 'Z') return `pid ${owner.pid} has exited (a zombie not yet reaped by its parent)`;
  if (stat.state === 'X') return `pid ${owner.pid} has exited`;
  if (owner.processStartTicks !== undefined) {
    if (stat.startTicks !== owner.processStartTicks) {
      return `pid ${owner.pid} now belongs to another process (started at tick ${stat.startTicks} since boot, the lock holder at tick ${owner.processStartTicks})`;
    }
    return undefined;
  }
  if (stat.startedAtMs !== undefined && Math.abs(stat.startedAtMs - owner.processStartedAt) > START_TIME_SLACK_MS) {
    return `pid ${owner.pid} now belongs to another process (started ${new Date(stat.startedAtMs).toISOString()}, the lock holder ${new Date(owner.processStartedAt).toISOString()})`;
  }
  return undefined;
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const o = JSON.parse(text) as Partial<LockOwner>;
    if (Number.isInteger(o.pid) && typeof o.hostname === 'string' && typeof o.processStartedAt === 'number') {
      // Optional fields that do not read right count as absent, never as "another process".
      const { processStartTicks, bootId, ...rest } = o as LockOwner;
      return {
        ...rest,
        ...(Number.isSafeInteger(processStartTicks) ? { processStartTicks } : {}),
        ...(typeof bootId === 'string' && bootId ? { bootId } : {}),
      };
    }
  } catch {
    // Unreadable: handled by the caller.
  }
  return undefined;
}

/**
 * Takes `<dir>/data-dir.lock` for this process: created with O_EXCL, holding the pid, host and
 * process start time. Two processes must not share a `DATA_DIR` (each would append to the log
 * and compact it behind the other's back), so a lock held by a live process refuses the start
 * with `DataDirInUseError`. A stale lock, left by a process that died without closing the
 * store, is taken over with a warning:
 *
 * - same host, pid not alive;
 * - same host, pid alive but not the holder: a zombie, or a process whose kernel start time
 *   (`/proc/<pid>/stat` starttime) is not the one recorded, i.e. the pid was reused;
 * - written before the machine rebooted (another boot id);
 * - same host, same pid as ours but another process start time: a previous incarnation, as
 *   after a container restart, where the pid namespace starts over;
 * - no readable owner and older than `unreadableAfterMs` (killed between create and write).
 *
 * A lock written on another host is never judged stale (its pid means nothing here): the
 * message says how to remove it. Two processes taking over the same stale lock within the same
 * few microseconds are not told apart; everything else is.
 */
export async function acquireDirLock(dir: string, opts: DirLockOptions): Promise<DirLock> {
  const path = join(dir, LOCK_FILE);
  const processStat = opts.processStat ?? readProcessStat;
  const bootId = await (opts.bootId ?? readBootId)();
  const self = opts.self ?? (await currentProcess(processStat, bootId));
  const isAlive = opts.isAlive ?? processIsAlive;
  const unreadableAfterMs = opts.unreadableAfterMs ?? 10_000;
  const mine: LockOwner = { ...self, lockedAt: new Date().toISOString() };
  const inUse = (owner: LockOwner | undefined, why: string) =>
    new DataDirInUseError(
      `DATA_DIR ${dir} is in use: ${why}. Two processes must not share a DATA_DIR; stop the other one, give this one its own DATA_DIR, or set KVSTORE_URL to share content through Redis. If that process is gone, delete ${path}.`,
      dir,
      owner,
    );

  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(path, 'wx');
      try {
        await fh.writeFile(`${JSON.stringify(mine)}\n`);
        await fh.sync();
      } finally {
        await fh.close();
      }
      return heldLock(path, mine);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let text: string;
    let ageMs: number;
    try {
      [text, ageMs] = await Promise.all([readFile(path, 'utf8'), stat(path).then((s) => Date.now() - s.mtimeMs)]);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile: try again
      throw e;
    }
    const owner = parseOwner(text);
    let stale: string;
    if (!owner) {
      if (ageMs < unreadableAfterMs) throw inUse(undefined, `${path} is being written by another process`);
      stale = 'the lock holds no readable owner';
    } else if (owner.hostname !== self.hostname) {
      throw inUse(
        owner,
        `locked by pid ${owner.pid} on host ${owner.hostname} since ${owner.lockedAt}, which cannot be checked from ${self.hostname}`,
      );
    } else if (owner.pid === self.pid) {
      if (owner.processStartedAt === self.processStartedAt)
        throw inUse(owner, `another store in this process (pid ${owner.pid}) holds it since ${owner.lockedAt}`);
      stale = `pid ${owner.pid} is this process, started anew (a previous run did not release the lock)`;
    } else if (owner.bootId !== undefined && bootId !== undefined && owner.bootId !== bootId) {
      stale = `pid ${owner.pid} ran before the machine restarted (boot id ${owner.bootId}, now ${bootId})`;
    } else if (!isAlive(owner.pid)) {
      stale = `pid ${owner.pid} is not running`;
    } else {
      const why = notTheHolder(owner, await processStat(owner.pid));
      if (why === undefined)
        throw inUse(owner, `locked by pid ${owner.pid}, which is running, since ${owner.lockedAt}`);
      stale = why;
    }
    opts.logger.warn(
      { dir, lock: path, previousOwner: owner ?? text.slice(0, 200) },
      `taking over a stale DATA_DIR lock: ${stale}`,
    );
    try {
      await unlink(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  throw inUse(undefined, `${path} keeps reappearing: another process is taking it at the same time`);
}

/** This process as it records itself; the kernel fields only where `/proc` has them. */
async function currentProcess(
  processStat: (pid: number) => Promise<ProcessStat | undefined>,
  bootId: string | undefined,
): Promise<Omit<LockOwner, 'lockedAt'>> {
  const stat = await processStat(process.pid);
  return {
    pid: process.pid,
    hostname: hostname(),
    processStartedAt: Math.round(performance.timeOrigin),
    ...(stat ? { processStartTicks: stat.startTicks } : {}),
    ...(bootId ? { bootId } : {}),
  };
}

function heldLock(path: string, mine: LockOwner): DirLock {
  let released = false;
  return {
    path,
    async release() {
      if (released) return;
      released = true;
      try {
        // Only our own lock: never delete one that another process took over meanwhile.
        const owner = parseOwner(await readFile(path, 'utf8'));
        if (
          owner?.pid !== mine.pid ||
          owner.processStartedAt !== mine.processStartedAt ||
          owner.lockedAt !== mine.lockedAt
        )
          return;
        await unlink(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    },
  };
}
