import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { DataDirInUseError, LOCK_FILE, acquireDirLock, processIsAlive } from '../../../service/content/dir-lock';
import { FileStore } from '../../../service/content/file-store';
import { silentLogger } from '../../../service/logger';

/** A logger that keeps its lines, to assert on warnings. */
function capture(): { logger: pino.Logger; lines: Array<{ msg: string; level: number }> } {
  const lines: Array<{ msg: string; level: number }> = [];
  return { logger: pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) }), lines };
}

/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

const self = { pid: process.pid, hostname: hostname(), processStartedAt: Math.round(performance.timeOrigin) };

describe('DATA_DIR lock', () => {
  let dir: string;
  let sleeper: ChildProcess | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dir-lock-'));
  });
  afterEach(() => {
    sleeper?.kill('SIGKILL');
    sleeper = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  const writeLock = (owner: object | string) =>
    writeFileSync(join(dir, LOCK_FILE), typeof owner === 'string' ? owner : JSON.stringify({ lockedAt: '2026-01-01T00:00:00.000Z', ...owner }));
  const lockOwner = () => JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'));

  it('two stores on one folder: the second refuses to start, naming DATA_DIR, until the first closes', async () => {
    const first = new FileStore({ dir, logger: silentLogger() });
    await first.load();
    expect(lockOwner()).toMatchObject({ pid: process.pid, hostname: hostname() });
    const second = new FileStore({ dir, logger: silentLogger() });
    const err = await second.load().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DataDirInUseError);
    expect(err).toMatchObject({ code: 'ERR_DATA_DIR_IN_USE', dir });
    expect((err as Error).message).toContain(`DATA_DIR ${dir} is in use`);
    expect((err as Error).message).toContain('must not share a DATA_DIR');
    // The refused store wrote nothing and did not take the lock away.
    await first.putMany([{ id: 'a', type: 'article', title: 'a', body: '', tags: [], created_at: 'c', updated_at: 'u' }]);
    await second.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    await first.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    expect((await second.load()).map((i) => i.id)).toEqual(['a']);
    await second.close();
  });

  it('refuses a lock held by another running process', async () => {
    sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    await new Promise((r) => sleeper!.once('spawn', r));
    writeLock({ pid: sleeper.pid, hostname: hostname(), processStartedAt: 1 });
    await expect(acquireDirLock(dir, { logger: silentLogger() })).rejects.toThrow(`locked by pid ${sleeper.pid}, which is running`);
    expect(lockOwner().pid).toBe(sleeper.pid);
  });

  it('takes over a stale lock (pid not alive) with a warning, and the store opens', async () => {
    const pid = await deadPid();
    expect(processIsAlive(pid)).toBe(false);
    writeLock({ pid, hostname: hostname(), processStartedAt: 1 });
    const { logger, lines } = capture();
    const store = new FileStore({ dir, logger });
    expect(await store.load()).toEqual([]);
    expect(lockOwner()).toMatchObject({ pid: process.pid });
    const warn = lines.find((l) => l.level === 40);
    expect(warn?.msg).toBe(`taking over a stale DATA_DIR lock: pid ${pid} is not running`);
    await store.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('takes over its own pid from an earlier start (a restarted container), not from a live sibling store', async () => {
    writeLock({ ...self, processStartedAt: self.processStartedAt - 60_000 });
    const lock = await acquireDirLock(dir, { logger: silentLogger() });
    expect(lockOwner()).toMatchObject(self);
    await expect(acquireDirLock(dir, { logger: silentLogger() })).rejects.toThrow(`another store in this process (pid ${process.pid})`);
    await lock.release();
    await lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('never judges a lock from another host stale', async () => {
    writeLock({ pid: await deadPid(), hostname: 'other-host', processStartedAt: 1 });
    await expect(acquireDirLock(dir, { logger: silentLogger() })).rejects.toThrow(/on host other-host .*cannot be checked from/);
  });

  it('takes over an unreadable lock only once it is old', async () => {
    writeLock('');
    await expect(acquireDirLock(dir, { logger: silentLogger() })).rejects.toThrow('is being written by another process');
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(dir, LOCK_FILE), past, past);
    const lock = await acquireDirLock(dir, { logger: silentLogger() });
    expect(lockOwner()).toMatchObject(self);
    await lock.release();
  });

  it('does not delete a lock that another process took over meanwhile', async () => {
    const lock = await acquireDirLock(dir, { logger: silentLogger() });
    writeLock({ pid: 4242, hostname: hostname(), processStartedAt: 2 });
    await lock.release();
    expect(lockOwner().pid).toBe(4242);
  });
});
