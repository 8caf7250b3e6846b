import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { CATALOGUE_FILE, FileContentStore } from '../../../../service/content/file-store';
import type { Item } from '../../../../service/content/item';
import { encodeRecord } from '../../../../service/content/file-store/record-log';
import { TS_LOADER_ARGS } from '../../../../tools/harness/service-process';
import { expectWholeBatches, testItem } from '../../../helpers/file-content-store';

/** The folder's files besides the content catalogue (derived data, written in the background). */
const contentFiles = (dir: string) => readdirSync(dir).filter((f) => f !== CATALOGUE_FILE);

const item = (id: string, body = `body of ${id} `.repeat(20)): Item => testItem(id, body);

/** A logger that keeps its records, to check what a failure logs. */
function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
  );
  return { logger, lines };
}

async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Compaction made to fail by real filesystem faults: a directory where the compaction must create
 * or rename a file (EISDIR, for root too, unlike a read-only folder), made after the store opened.
 * The store is empty at start, so the first compaction writes generation 1.
 */
describe('FileContentStore when compaction fails', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'file-store-compaction-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // Fast retries so a test sees several; a long first retry where the test wants none.
  const open = async (retry = { initialMs: 20, maxMs: 80 }) => {
    const { logger, lines } = recordingLogger();
    const store = new FileContentStore({ dir, logger, compactAfterBytes: 1024, compactionRetry: retry });
    const items = await store.load();
    return { store, items, lines };
  };
  const write20 = async (store: FileContentStore, prefix: string) => {
    for (let i = 0; i < 20; i++) await store.write([item(`${prefix}-${i}`)]);
  };

  const FAULTS = [
    ['the new snapshot cannot be created (its .tmp path is a directory)', 'content-1.snapshot.tmp'],
    ['the new snapshot cannot be renamed into place (its path is a directory)', 'content-1.snapshot'],
    ['the new log cannot be created (its path is a directory)', 'content-1.log'],
  ] as const;

  it.each(FAULTS)(
    '%s: every write resolves and is read back; failing, counted, logged, retried; after the fault one generation',
    async (_name, fault) => {
      const { store, lines } = await open();
      mkdirSync(join(dir, fault, 'blocker'), { recursive: true });
      // ~10 KiB of log against a 1 KiB threshold: compaction is due after the third write.
      await write20(store, 'a');
      expect((await store.getMany(['a-0', 'a-19'])).map((i) => i.id)).toEqual(['a-0', 'a-19']);
      const failing = store.compaction();
      expect(failing).toMatchObject({ state: 'failing', lastError: 'EISDIR' });
      expect(failing.failures).toBeGreaterThanOrEqual(1);
      expect(failing.nextRetryAt).toBeGreaterThan(failing.lastFailureAt!);
      const logged = lines.find(
        (l) =>
          l.msg ===
          'content store compaction failed; writes go on into the current log (nothing is lost) and the compaction is retried',
      );
      expect(logged).toMatchObject({ level: 50, err: { code: 'EISDIR' }, generation: 0 });
      // Retries run by themselves.
      await until('a retry', () => store.compaction().failures >= failing.failures + 2);
      rmSync(join(dir, fault), { recursive: true });
      await until('a successful retry', () => store.compaction().state === 'ok');
      const ok = store.compaction();
      expect(ok).toMatchObject({ state: 'ok', lastError: 'EISDIR' });
      expect(ok.nextRetryAt).toBeUndefined();
      expect(lines.some((l) => l.msg === 'content store compaction succeeded again')).toBe(true);
      await write20(store, 'b');
      await store.close();
      // Generation 0 is gone, nothing else left behind.
      expect(contentFiles(dir).filter((f) => !/^content-\d+\.(snapshot|log)$/.test(f))).toEqual([]);
      expect(readdirSync(dir).filter((f) => f.endsWith('.snapshot')).length).toBe(1);
      const re = await open();
      expect(re.items).toHaveLength(40);
      await re.store.close();
    },
  );

  it.each(FAULTS)(
    '%s: one attempt, no matter how many writes follow, and generation 0 left as it was',
    async (_name, fault) => {
      // No retry during the test (the first is a minute away): what the failed attempt left.
      const { store } = await open({ initialMs: 60_000, maxMs: 60_000 });
      mkdirSync(join(dir, fault, 'blocker'), { recursive: true });
      await write20(store, 'a');
      await write20(store, 'b');
      expect(store.compaction().failures).toBe(1);
      // The queue ran the attempt before the later writes: nothing in flight now.
      expect(contentFiles(dir).sort()).toEqual(['content-0.log', 'data-dir.lock', fault].sort());
      await store.close();
    },
  );

  it('retries with doubling backoff, capped', async () => {
    const { store, lines } = await open({ initialMs: 30, maxMs: 120 });
    mkdirSync(join(dir, 'content-1.snapshot.tmp'));
    await write20(store, 'a');
    await until('five failures', () => store.compaction().failures >= 5);
    await store.close();
    // Each failure logs its number and the wait before the next attempt.
    const delays = lines.filter((l) => typeof l.retryInMs === 'number').map((l) => [l.failures, l.retryInMs]);
    expect(delays.slice(0, 5)).toEqual([
      [1, 30],
      [2, 60],
      [3, 120],
      [4, 120],
      [5, 120],
    ]);
  });

  it('a write after the failed switch to a new log stays the newest at the next start (the half-made snapshot is gone)', async () => {
    // No retry during the test: the restart decides.
    const { store } = await open({ initialMs: 60_000, maxMs: 60_000 });
    mkdirSync(join(dir, 'content-1.log'));
    await write20(store, 'a');
    expect(store.compaction().state).toBe('failing');
    await store.write([item('a-3', 'updated after the failed compaction')]);
    await store.close();
    expect(contentFiles(dir).sort()).toEqual(['content-0.log', 'content-1.log']);
    rmSync(join(dir, 'content-1.log'), { recursive: true });
    const re = await open();
    expect(re.items).toHaveLength(20);
    expect(re.items.find((i) => i.id === 'a-3')?.body).toBe('updated after the failed compaction');
    await re.store.close();
  });

  it.each([
    ['before the switch', 'content-1.snapshot.tmp'],
    ['at the switch (the new snapshot is renamed in, then removed again)', 'content-1.log'],
  ])(
    'survives SIGKILL while compactions keep failing %s: every acknowledged batch loads, nothing half-written',
    async (_name, fault) => {
      // As the SIGKILL test of file-store.test.ts, with a fault in place once the store is open and
      // retries every few milliseconds, so kills land in failing attempts too.
      const script = `
      const { FileContentStore } = require(${JSON.stringify(join(__dirname, '../../../../service/content/file-store/file-content-store'))});
      const { mkdirSync } = require('node:fs');
      const { join } = require('node:path');
      const pino = require('pino');
      (async () => {
        const s = new FileContentStore({ dir: process.argv[1], logger: pino({ level: 'silent' }), compactAfterBytes: 16 * 1024, compactionRetry: { initialMs: 1, maxMs: 4 } });
        await s.load();
        mkdirSync(join(process.argv[1], process.argv[2]));
        for (let b = 0; ; b++) {
          const items = Array.from({ length: 20 }, (_, i) => ({ id: 'b' + b + '-' + i, type: 'article', title: 't', body: 'x'.repeat(100), tags: [], created_at: 'c', updated_at: 'u' }));
          await s.write(items);
          process.stdout.write(b + ' ' + s.compaction().failures + '\\n');
        }
      })();`;
      const child = spawn(process.execPath, [...TS_LOADER_ARGS, '-e', script, dir, fault], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let acked = -1;
      let failures = 0;
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          const last = d.toString().trim().split('\n').pop()!.split(' ');
          acked = Number(last[0]);
          failures = Number(last[1]);
          if (acked >= 60 && failures >= 3) {
            child.kill('SIGKILL');
            resolve();
          }
        });
        child.once('exit', () =>
          acked >= 60 && failures >= 3 ? resolve() : reject(new Error(`writer died early: ${err}`)),
        );
      });
      await new Promise((r) => child.once('exit', r));
      expect(readdirSync(dir).filter((f) => f.endsWith('.snapshot'))).toEqual([]);
      rmSync(join(dir, fault), { recursive: true });
      const { items, store } = await open();
      expectWholeBatches(items, acked);
      await store.close();
    },
    60_000,
  );

  it('a failed rewrite after recovery keeps the damaged file, goes on serving, and is finished by the retry', async () => {
    // A damaged log (to be kept as .damaged) whose .damaged name is taken by a non-empty folder:
    // the rewrite switches to generation 1 but cannot rename the damaged file.
    writeFileSync(
      join(dir, 'content-0.log'),
      Buffer.concat([encodeRecord({ op: 'put', items: [item('kept')] }), Buffer.from('garbage\n')]),
    );
    mkdirSync(join(dir, 'content-0.log.damaged', 'blocker'), { recursive: true });
    const { store, items } = await open();
    expect(items.map((i) => i.id)).toEqual(['kept']);
    expect(store.compaction()).toMatchObject({ state: 'failing', failures: 1 });
    // The damaged file is never deleted while its new name is taken, and the retries only finish
    // the clean-up: no generation per attempt.
    await until('a few retries', () => store.compaction().failures >= 3);
    expect(
      readdirSync(dir)
        .filter((f) => f.startsWith('content-'))
        .sort(),
    ).toEqual(['content-0.log', 'content-0.log.damaged', 'content-1.log', 'content-1.snapshot']);
    await store.write([item('new')]);
    rmSync(join(dir, 'content-0.log.damaged'), { recursive: true });
    await until('a successful retry', () => store.compaction().state === 'ok');
    await store.close();
    const files = readdirSync(dir);
    expect(files).toContain('content-0.log.damaged');
    expect(files.filter((f) => f.endsWith('.snapshot'))).toHaveLength(1);
    expect(files.filter((f) => /^content-0\./.test(f))).toEqual(['content-0.log.damaged']);
    const re = await open();
    expect(re.items.map((i) => i.id).sort()).toEqual(['kept', 'new']);
    await re.store.close();
  });
});
