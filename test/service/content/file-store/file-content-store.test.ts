import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileContentStore } from '../../../../service/content/file-store/file-content-store';
import type { Item } from '../../../../service/content/item';
import { encodeRecord } from '../../../../service/content/file-store/record-log';
import { wasParsed } from '../../../../service/content/lazy-item';
import { silentLogger } from '../../../../service/lib/logger';
import { TS_LOADER_ARGS } from '../../../../tools/harness/service-process';
import { expectWholeBatches, testItem, withTempDir } from '../../../helpers/file-content-store';

const item = (id: string, body = `body of ${id}`): Item => testItem(id, body);

describe('FileContentStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'file-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const open = async (compactAfterBytes?: number) => {
    const store = new FileContentStore({
      dir,
      logger: silentLogger(),
      ...(compactAfterBytes ? { compactAfterBytes } : {}),
    });
    const items = await store.load();
    return { store, items };
  };

  it('starts empty in a new folder and keeps writes across reopening', async () => {
    const first = await open();
    expect(first.items).toEqual([]);
    await first.store.write([item('a'), item('b')]);
    await first.store.write([item('a', 'second version')]);
    await first.store.close();
    const second = await open();
    expect(second.items.map((i) => [i.id, i.body]).sort()).toEqual([
      ['a', 'second version'],
      ['b', 'body of b'],
    ]);
    expect(await second.store.getMany(['b', 'zz'])).toEqual([item('b')]);
    // Packed, as the ContentStore contract says (`wasParsed` is undefined for any other item).
    const packed = (items: readonly Item[]) => items.map((i) => wasParsed(i) !== undefined);
    expect(packed(second.items)).toEqual([true, true]);
    expect(packed(await second.store.getMany(['a', 'b']))).toEqual([true, true]);
    await second.store.close();
  });

  it('drops a batch cut off mid-write (all or nothing), truncates it and appends after it', async () => {
    const s = await open();
    await s.store.write([item('kept')]);
    await s.store.close();
    const half = encodeRecord({ op: 'put', items: [item('lost-1'), item('lost-2')] });
    appendFileSync(join(dir, 'content-0.log'), half.subarray(0, Math.floor(half.length / 2)));
    const reopened = await open();
    expect(reopened.items.map((i) => i.id)).toEqual(['kept']);
    await reopened.store.write([item('after')]);
    await reopened.store.close();
    const last = await open();
    expect(last.items.map((i) => i.id).sort()).toEqual(['after', 'kept']);
    await last.store.close();
  });

  it('compacts into a snapshot generation and still loads everything', async () => {
    const s = await open(2048);
    for (let i = 0; i < 30; i++) await s.store.write([item(`i-${i}`, 'x'.repeat(200))]);
    await s.store.write([item('i-3', 'updated')]);
    await s.store.close();
    const files = readdirSync(dir).sort();
    expect(files.some((f) => /^content-[1-9]\d*\.snapshot$/.test(f))).toBe(true);
    expect(files.filter((f) => f.endsWith('.snapshot'))).toHaveLength(1);
    const re = await open(2048);
    expect(re.items).toHaveLength(30);
    expect(re.items.find((i) => i.id === 'i-3')?.body).toBe('updated');
    await re.store.close();
  });

  it('ignores a half-written snapshot (.tmp) left by a crash during compaction', async () => {
    const s = await open();
    await s.store.write([item('a')]);
    await s.store.close();
    writeFileSync(join(dir, 'content-1.snapshot.tmp'), 'garbage');
    const re = await open();
    expect(re.items.map((i) => i.id)).toEqual(['a']);
    expect(readdirSync(dir)).not.toContain('content-1.snapshot.tmp');
    await re.store.close();
  });

  it('starts from an unreadable snapshot with what the logs hold, keeps the file as .damaged and reopens normally', async () => {
    writeFileSync(join(dir, 'content-4.snapshot'), 'not records');
    writeFileSync(join(dir, 'content-4.log'), encodeRecord({ op: 'put', items: [item('from-log')] }));
    const s = await open();
    expect(s.items.map((i) => i.id)).toEqual(['from-log']);
    await s.store.close();
    expect(readdirSync(dir).sort()).toEqual(['content-4.snapshot.damaged', 'content-5.log', 'content-5.snapshot']);
    const re = await open();
    expect(re.items.map((i) => i.id)).toEqual(['from-log']);
    await re.store.close();
  });

  it('an older generation put back beside a whole snapshot: newer content wins, and what the snapshot does not hold (deleted before it) stays out', async () => {
    const s = await open(2048);
    for (let i = 0; i < 20; i++) await s.store.write([item(`i-${i}`, 'x'.repeat(200))]);
    await s.store.close();
    const snap = readdirSync(dir).find((f) => f.endsWith('.snapshot'))!;
    const gen = Number(/\d+/.exec(snap)![0]);
    // An "old backup" of an earlier generation: one item updated since, one only there.
    writeFileSync(
      join(dir, `content-${gen - 1}.snapshot`),
      Buffer.concat([
        encodeRecord({ op: 'snapshot', items: [item('i-0', 'old'), item('only-in-backup')] }),
        encodeRecord({ op: 'end', count: 2 }),
      ]),
    );
    const re = await open(2048);
    // A whole snapshot holds everything older generations held but what was deleted before it
    // (issue 39): merged, the backup would bring a deleted item back.
    expect(re.items).toHaveLength(20);
    expect(re.items.map((i) => i.id)).not.toContain('only-in-backup');
    expect(re.items.find((i) => i.id === 'i-0')?.body).toBe('x'.repeat(200));
    await re.store.close();
    expect(readdirSync(dir).filter((f) => f.endsWith('.snapshot'))).toEqual([`content-${gen + 1}.snapshot`]);
    const last = await open();
    expect(last.items).toHaveLength(20);
    await last.store.close();
  });

  it('survives SIGKILL at any moment: every acknowledged batch is there, nothing half-written', async () => {
    // A child process writes batches of 20 items as fast as it can and prints each acknowledged
    // batch number; we kill it mid-stream and reopen the folder.
    const script = `
      const { FileContentStore } = require(${JSON.stringify(join(__dirname, '../../../../service/content/file-store/file-content-store'))});
      const pino = require('pino');
      (async () => {
        const s = new FileContentStore({ dir: process.argv[1], logger: pino({ level: 'silent' }), compactAfterBytes: 64 * 1024 });
        await s.load();
        for (let b = 0; ; b++) {
          const items = Array.from({ length: 20 }, (_, i) => ({ id: 'b' + b + '-' + i, type: 'article', title: 't', body: 'x'.repeat(100), tags: [], created_at: 'c', updated_at: 'u' }));
          await s.write(items);
          process.stdout.write(b + '\\n');
        }
      })();`;
    const child = spawn(process.execPath, [...TS_LOADER_ARGS, '-e', script, dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let acked = -1;
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        const lines = d.toString().trim().split('\n');
        acked = Number(lines[lines.length - 1]);
        if (acked >= 60) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.once('exit', () => (acked >= 60 ? resolve() : reject(new Error(`writer died early: ${err}`))));
    });
    await new Promise((r) => child.once('exit', r));
    const { items, store } = await open();
    expectWholeBatches(items, acked);
    expect(acked).toBeGreaterThanOrEqual(60);
    await store.close();
  }, 60_000);
});

describe('FileContentStore write failures', () => {
  it('answers a failed append with the error code and DATA_DIR, never the server path, and logs the detail', async () => {
    await withTempDir('file-store-fail-', async (dir) => {
      const logged: string[] = [];
      const logger = silentLogger();
      logger.error = ((obj: unknown, msg?: string) =>
        void logged.push(JSON.stringify(obj) + (msg ?? ''))) as typeof logger.error;
      const store = new FileContentStore({ dir, logger });
      await store.load();
      // A real fs failure: the log's descriptor closed under the store (EBADF on the append).
      await (store as unknown as { state: { log: { close(): Promise<void> } } }).state.log.close();
      const err = await store.write([item('x')]).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      const message = (err as Error).message;
      expect(message).toMatch(/^could not write to the content store \(DATA_DIR\): [A-Z_]+; nothing was stored$/);
      expect(message).not.toContain(dir);
      expect(logged.some((l) => l.includes('nothing was stored'))).toBe(true);
      await store.close().catch(() => undefined);
    });
  });
});
