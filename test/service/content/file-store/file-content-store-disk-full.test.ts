import { statSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { StoreUnavailableError } from '../../../../service/content/content-store';
import { FileContentStore } from '../../../../service/content/file-store/file-content-store';
import type { Item } from '../../../../service/content/item';
import { testItem, withTempDir } from '../../../helpers/file-content-store';

/**
 * The file store on a disk that fills (issue 37, row 1), in process: the log's file handle gets a
 * capacity, and a write past it does what a full disk does to `write(2)` through libuv: it takes
 * the bytes that fit and returns that short count without an error, and the next write throws
 * ENOSPC. (The real thing, a tmpfs under the service process, is test/faults/disk-full.test.ts.)
 */

const item = (id: string): Item => testItem(id, `body of ${id} `.repeat(50));

/** Gives the store's current log a capacity in bytes (file size); `Infinity` frees the disk. */
function limitLog(store: FileContentStore, code = 'ENOSPC'): { capacity: number } {
  const limit = { capacity: Infinity };
  const log = (store as unknown as { state: { log: FileHandle } }).state.log;
  const write = log.write.bind(log) as (
    b: Uint8Array,
    o: number,
    l: number,
    p?: number | null,
  ) => Promise<{ bytesWritten: number }>;
  (
    log as unknown as {
      write: (b: Uint8Array, o?: number, l?: number, p?: number | null) => Promise<{ bytesWritten: number }>;
    }
  ).write = async (buffer, offset = 0, length = buffer.length - offset, position) => {
    const room = limit.capacity - (await log.stat()).size;
    if (room <= 0) throw Object.assign(new Error(`${code}: write failed, write`), { code });
    return write(buffer, offset, Math.min(length, room), position);
  };
  return limit;
}

function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
  );
  return { logger, lines };
}

describe('FileContentStore when the disk fills', () => {
  it('a short append is a refused write: 503 error, the log cut back to its last whole record, nothing acknowledged lost', async () => {
    await withTempDir('file-store-full-', async (dir) => {
      const { logger, lines } = recordingLogger();
      const store = new FileContentStore({ dir, logger, freeBytes: async () => 0 });
      await store.load();
      await store.write([item('a'), item('b')]);
      const log = join(dir, 'content-0.log');
      const whole = statSync(log).size;
      const limit = limitLog(store);
      // Room for part of the next record: the first write is short, the second throws.
      limit.capacity = whole + 100;
      const err = await store.write([item('c')]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as Error).message).toBe(
        'could not write to the content store (DATA_DIR): the disk is full (ENOSPC); nothing was stored. Writes succeed again once space is freed; retrying is safe',
      );
      // Cut back to the last whole record: not the partial 100 bytes, and no sparse tail.
      expect(statSync(log).size).toBe(whole);
      expect(store.writes()).toMatchObject({ state: 'disk_full', failures: 1, lastError: 'ENOSPC' });
      expect(lines.some((l) => l.code === 'ENOSPC' && /no space left/.test(String(l.msg)))).toBe(true);
      // Still full: refused again, the log unchanged.
      await expect(store.write([item('d')])).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(statSync(log).size).toBe(whole);
      expect(store.writes()).toMatchObject({ state: 'disk_full', failures: 2 });
      // Space returns: the next write succeeds, without reopening, and the state is ok again.
      limit.capacity = Infinity;
      await store.write([item('e')]);
      expect(store.writes()).toMatchObject({ state: 'ok', failures: 2, lastError: 'ENOSPC' });
      expect(lines.some((l) => l.msg === 'content writes to DATA_DIR succeed again')).toBe(true);
      await store.close();
      // What a restart loads: every acknowledged item, none of the refused ones.
      const again = new FileContentStore({ dir, logger: pino({ level: 'silent' }) });
      expect((await again.load()).map((i) => i.id).sort()).toEqual(['a', 'b', 'e']);
      await again.close();
    });
  });

  it('a short append with no room at all for the rest is refused too (the count is never trusted as whole)', async () => {
    await withTempDir('file-store-full-', async (dir) => {
      const store = new FileContentStore({ dir, logger: pino({ level: 'silent' }), freeBytes: async () => 0 });
      await store.load();
      await store.write([item('a')]);
      const limit = limitLog(store);
      // Exactly one byte short of the record: one short write, then ENOSPC.
      limit.capacity = statSync(join(dir, 'content-0.log')).size * 2 - 1;
      await expect(store.write([item('b')])).rejects.toBeInstanceOf(StoreUnavailableError);
      await store.close();
      const again = new FileContentStore({ dir, logger: pino({ level: 'silent' }) });
      expect((await again.load()).map((i) => i.id)).toEqual(['a']);
      await again.close();
    });
  });

  it('health is ok again once the refused write would fit, without a write to prove it', async () => {
    await withTempDir('file-store-full-', async (dir) => {
      let free = 0;
      const store = new FileContentStore({
        dir,
        logger: pino({ level: 'silent' }),
        spaceCheckMs: 10,
        freeBytes: async () => free,
      });
      await store.load();
      const limit = limitLog(store);
      limit.capacity = 0;
      await expect(store.write([item('a')])).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(store.writes().state).toBe('disk_full');
      // A little space, less than the refused record: still full.
      free = 10;
      await new Promise((r) => setTimeout(r, 50));
      expect(store.writes().state).toBe('disk_full');
      free = 1 << 20;
      const end = Date.now() + 5000;
      while (store.writes().state !== 'ok' && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      expect(store.writes().state).toBe('ok');
      await store.close();
    });
  });

  it('another write error is `failing`, not `disk_full`, and names its code', async () => {
    await withTempDir('file-store-full-', async (dir) => {
      const store = new FileContentStore({ dir, logger: pino({ level: 'silent' }) });
      await store.load();
      const limit = limitLog(store, 'EIO');
      limit.capacity = 0;
      const err = await store.write([item('a')]).catch((e: unknown) => e);
      expect((err as Error).message).toBe('could not write to the content store (DATA_DIR): EIO; nothing was stored');
      expect(store.writes()).toMatchObject({ state: 'failing', lastError: 'EIO' });
      limit.capacity = Infinity;
      await store.write([item('b')]);
      expect(store.writes().state).toBe('ok');
      await store.close();
    });
  });
});
