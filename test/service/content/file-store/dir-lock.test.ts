import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import {
  DataDirInUseError,
  LOCK_FILE,
  acquireDirLock,
  processIsAlive,
  readProcessStat,
} from '../../../../service/content/file-store/dir-lock';
import { FileContentStore } from '../../../../service/content/file-store/file-content-store';
import { silentLogger } from '../../../../service/lib/logger';
import { waitFor } from '../../../../tools/harness/ports';

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
    writeFileSync(
      join(dir, LOCK_FILE),
      typeof owner === 'string' ? owner : JSON.stringify({ lockedAt: '2026-01-01T00:00:00.000Z', ...owner }),
    );
  const lockOwner = () => JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'));

  it('two stores on one folder: the second refuses to start, naming DATA_DIR, until the first closes', async () => {
    const first = new FileContentStore({ dir, logger: silentLogger() });
    await first.load();
    expect(lockOwner()).toMatchObject({ pid: process.pid, hostname: hostname() });
    const second = new FileContentStore({ dir, logger: silentLogger() });
    const err = await second.load().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DataDirInUseError);
    expect(err).toMatchObject({ code: 'ERR_DATA_DIR_IN_USE', dir });
    expect((err as Error).message).toContain(`DATA_DIR ${dir} is in use`);
    expect((err as Error).message).toContain('must not share a DATA_DIR');
    // The refused store wrote nothing and did not take the lock away.
    await first.write([{ id: 'a', type: 'article', title: 'a', body: '', tags: [], created_at: 'c', updated_at: 'u' }]);
    await second.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    await first.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    expect((await second.load()).map((i) => i.id)).toEqual(['a']);
    await second.close();
  });

  /** A live process that is not this one, and what the kernel says of it. */
  async function startSleeper() {
    sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    await new Promise((r) => sleeper!.once('spawn', r));
    const stat = await readProcessStat(sleeper.pid!);
    if (!stat?.startedAtMs) throw new Error('this test needs Linux /proc');
    return { pid: sleeper.pid!, stat: { ...stat, startedAtMs: stat.startedAtMs } };
  }

  it('refuses a lock held by another running process, judged by its kernel start time', async () => {
    const { pid, stat } = await startSleeper();
    writeLock({
      pid,
      hostname: hostname(),
      processStartedAt: stat.startedAtMs + 300,
      processStartTicks: stat.startTicks,
    });
    await expect(acquireDirLock(dir, { logger: silentLogger() })).rejects.toThrow(
      `locked by pid ${pid}, which is running`,
    );
    // A lock of an older version holds only node's start time, a little after the kernel's.
    writeLock({ pid, hostname: hostname(), processStartedAt: stat.startedAtMs + 700 });
    await expect(acquireDirLock(dir, { logger: silentLogger() })).rejects.toThrow(
      `locked by pid ${pid}, which is running`,
    );
    expect(lockOwner().pid).toBe(pid);
  });

  it('records its own kernel start time and boot id in the lock', async () => {
    const lock = await acquireDirLock(dir, { logger: silentLogger() });
    const me = await readProcessStat(process.pid);
    expect(lockOwner()).toMatchObject({
      pid: process.pid,
      processStartTicks: me?.startTicks,
      bootId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    await lock.release();
  });

  it('takes over a lock whose pid now belongs to another process (kernel start time differs), with a warning', async () => {
    const { pid, stat } = await startSleeper();
    writeLock({
      pid,
      hostname: hostname(),
      processStartedAt: stat.startedAtMs - 5_000,
      processStartTicks: stat.startTicks - 500,
    });
    const { logger, lines } = capture();
    const store = new FileContentStore({ dir, logger });
    expect(await store.load()).toEqual([]);
    expect(lockOwner()).toMatchObject({ pid: process.pid });
    expect(lines.find((l) => l.level === 40)?.msg).toBe(
      `taking over a stale DATA_DIR lock: pid ${pid} now belongs to another process (started at tick ${stat.startTicks} since boot, the lock holder at tick ${stat.startTicks - 500})`,
    );
    await store.close();
  });

  it('takes over a lock of an older version whose pid was reused (start time an hour off)', async () => {
    const { pid, stat } = await startSleeper();
    writeLock({ pid, hostname: hostname(), processStartedAt: stat.startedAtMs - 3_600_000 });
    const { logger, lines } = capture();
    const lock = await acquireDirLock(dir, { logger });
    expect(lines.find((l) => l.level === 40)?.msg).toMatch(
      new RegExp(`^taking over a stale DATA_DIR lock: pid ${pid} now belongs to another process \\(started `),
    );
    await lock.release();
  });

  it('takes over a lock held by a zombie (exited, not reaped)', async () => {
    // sh starts a short `sleep` in the background, prints its pid and becomes a long `sleep`,
    // which never reaps it. The child outlives the exec, so sh cannot reap it first.
    sleeper = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const zombie = await new Promise<number>((r) =>
      sleeper!.stdout!.once('data', (d: Buffer) => r(Number(d.toString().trim()))),
    );
    const stat = await waitFor('the zombie state', async () => {
      const st = await readProcessStat(zombie);
      return st?.state === 'Z' ? st : undefined;
    });
    expect(processIsAlive(zombie)).toBe(true);
    writeLock({
      pid: zombie,
      hostname: hostname(),
      processStartedAt: stat.startedAtMs!,
      processStartTicks: stat.startTicks,
    });
    const { logger, lines } = capture();
    const lock = await acquireDirLock(dir, { logger });
    expect(lines.find((l) => l.level === 40)?.msg).toBe(
      `taking over a stale DATA_DIR lock: pid ${zombie} has exited (a zombie not yet reaped by its parent)`,
    );
    await lock.release();
  });

  it('takes over a lock written before the machine restarted, even if its pid runs now', async () => {
    const { pid, stat } = await startSleeper();
    writeLock({
      pid,
      hostname: hostname(),
      processStartedAt: stat.startedAtMs,
      processStartTicks: stat.startTicks,
      bootId: '00000000-0000-0000-0000-000000000000',
    });
    const { logger, lines } = capture();
    const lock = await acquireDirLock(dir, { logger });
    expect(lines.find((l) => l.level === 40)?.msg).toMatch(
      `pid ${pid} ran before the machine restarted (boot id 00000000-0000-0000-0000-000000000000, now `,
    );
    await lock.release();
  });

  it('takes over a stale lock (pid not alive) with a warning, and the store opens', async () => {
    const pid = await deadPid();
    expect(processIsAlive(pid)).toBe(false);
    writeLock({ pid, hostname: hostname(), processStartedAt: 1 });
    const { logger, lines } = capture();
    const store = new FileContentStore({ dir, logger });
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
    await expect(acquireDirLock(dir, { logger: silentLogger() })).rejects.toThrow(
      `another store in this process (pid ${process.pid})`,
    );
    await lock.release();
    await lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('never judges a lock from another host stale', async () => {
    writeLock({ pid: await deadPid(), hostname: 'other-host', processStartedAt: 1 });
    await expect(acquireDirLock(dir, { logger: silentLogger() })).rejects.toThrow(
      /on host other-host .*cannot be checked from/,
    );
  });

  it('takes over an unreadable lock only once it is old', async () => {
    writeLock('');
    await expect(acquireDirLock(dir, { logger: silentLogger() })).rejects.toThrow(
      'is being written by another process',
    );
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
