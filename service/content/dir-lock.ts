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
  readonly self?: Pick<LockOwner, 'pid' | 'hostname' | 'processStartedAt'>;
  /** Whether a process is alive. @default `process.kill(pid, 0)` */
  readonly isAlive?: (pid: number) => boolean;
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

function parseOwner(text: string): LockOwner | undefined {
  try {
    const o = JSON.parse(text) as Partial<LockOwner>;
    if (Number.isInteger(o.pid) && typeof o.hostname === 'string' && typeof o.processStartedAt === 'number') return o as LockOwner;
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
  const self = opts.self ?? { pid: process.pid, hostname: hostname(), processStartedAt: Math.round(performance.timeOrigin) };
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
      throw inUse(owner, `locked by pid ${owner.pid} on host ${owner.hostname} since ${owner.lockedAt}, which cannot be checked from ${self.hostname}`);
    } else if (owner.pid === self.pid) {
      if (owner.processStartedAt === self.processStartedAt) throw inUse(owner, `another store in this process (pid ${owner.pid}) holds it since ${owner.lockedAt}`);
      stale = `pid ${owner.pid} is this process, started anew (a previous run did not release the lock)`;
    } else if (isAlive(owner.pid)) {
      throw inUse(owner, `locked by pid ${owner.pid}, which is running, since ${owner.lockedAt}`);
    } else {
      stale = `pid ${owner.pid} is not running`;
    }
    opts.logger.warn({ dir, lock: path, previousOwner: owner ?? text.slice(0, 200) }, `taking over a stale DATA_DIR lock: ${stale}`);
    try {
      await unlink(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  throw inUse(undefined, `${path} keeps reappearing: another process is taking it at the same time`);
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
        if (owner?.pid !== mine.pid || owner.processStartedAt !== mine.processStartedAt || owner.lockedAt !== mine.lockedAt) return;
        await unlink(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    },
  };
}
