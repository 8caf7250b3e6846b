import { mkdir, open, readdir, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { DEFAULT_CONTENT } from '../../configs';
import type { Item } from './item';
import { acquireDirLock, type DirLock } from './dir-lock';
import { decodeRecords, encodeRecord } from './record-log';
import { StoreUnavailableError, type ContentStore } from './store';

/** Options of `FileStore`. */
export interface FileStoreOptions {
  /** Folder of the store (`DATA_DIR`); created when missing. */
  readonly dir: string;
  readonly logger: Logger;
  /**
   * Compact (snapshot + fresh log) once the log is larger than this and than the last snapshot
   * (`CONTENT_COMPACTION_BYTES`).
   * @default DEFAULT_CONTENT.compactionBytes (8 MiB)
   */
  readonly compactAfterBytes?: number;
}

interface PutRecord {
  op: 'put';
  items: readonly Item[];
}
interface SnapshotRecord {
  op: 'snapshot';
  items: Item[];
}
interface EndRecord {
  op: 'end';
  count: number;
}

const SNAPSHOT_CHUNK = 500;
const NAME = /^content-(\d{1,12})\.(snapshot|log)$/;

/**
 * The embedded durable store: generation `g` is a snapshot file `content-g.snapshot` plus an
 * append-only log `content-g.log`, both made of checksummed records (record-log.ts).
 *
 * - A write appends one record holding the whole batch and `fdatasync`s before resolving, so a
 *   batch is all-or-nothing: a kill mid-append leaves a torn last record that the next start
 *   detects by length and CRC and cuts off.
 * - Compaction writes `content-(g+1).snapshot.tmp`, fsyncs it, renames it into place and fsyncs
 *   the folder; only then is generation g deleted. A kill at any point leaves either
 *   generation complete.
 * - One process per folder: two replicas must not share a `DATA_DIR` (use `KVSTORE_URL`).
 *   `load` takes `data-dir.lock` in the folder (dir-lock.ts) and refuses to open a folder that a
 *   live process holds; `close` releases it.
 */
export class FileStore implements ContentStore {
  readonly kind = 'file' as const;
  private readonly items = new Map<string, Item>();
  private readonly compactAfterBytes: number;
  private gen = 0;
  private log: FileHandle | undefined;
  private logBytes = 0;
  private snapshotBytes = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private broken: Error | undefined;
  private lock: DirLock | undefined;

  constructor(private readonly opts: FileStoreOptions) {
    this.compactAfterBytes = opts.compactAfterBytes ?? DEFAULT_CONTENT.compactionBytes;
  }

  private path(gen: number, kind: 'snapshot' | 'log'): string {
    return join(this.opts.dir, `content-${gen}.${kind}`);
  }

  async load(): Promise<Item[]> {
    await mkdir(this.opts.dir, { recursive: true });
    this.lock ??= await acquireDirLock(this.opts.dir, { logger: this.opts.logger });
    try {
      return await this.open();
    } catch (e) {
      await this.releaseLock();
      throw e;
    }
  }

  private async open(): Promise<Item[]> {
    const names = await readdir(this.opts.dir);
    const snapshots = names
      .map((n) => NAME.exec(n))
      .filter((m): m is RegExpExecArray => m !== null && m[2] === 'snapshot')
      .map((m) => Number(m[1]))
      .sort((a, b) => b - a);
    this.gen = snapshots[0] ?? 0;
    this.items.clear();
    if (snapshots.length) await this.readSnapshot(this.gen);
    await this.replayLog();
    for (const n of names) {
      const m = NAME.exec(n);
      if ((m && Number(m[1]) < this.gen) || n.endsWith('.tmp')) await rm(join(this.opts.dir, n), { force: true });
    }
    this.log = await open(this.path(this.gen, 'log'), 'a');
    await this.syncDir();
    this.opts.logger.info({ dir: this.opts.dir, items: this.items.size, generation: this.gen }, 'content store loaded');
    return [...this.items.values()];
  }

  private async readSnapshot(gen: number): Promise<void> {
    const file = this.path(gen, 'snapshot');
    const buf = await readFile(file);
    const { records, torn } = decodeRecords(buf);
    const end = records[records.length - 1] as EndRecord | undefined;
    let count = 0;
    for (const r of records) if ((r as SnapshotRecord).op === 'snapshot') count += (r as SnapshotRecord).items.length;
    // A snapshot is renamed into place only once complete and fsynced: damage here is
    // corruption, not a crash, and silently starting with less content would lose data.
    if (torn || end?.op !== 'end' || end.count !== count) {
      throw new Error(`content snapshot ${file} is damaged (checksum or length mismatch); restore it from a backup or move it away to start from the log`);
    }
    for (const r of records) {
      if ((r as SnapshotRecord).op === 'snapshot') for (const i of (r as SnapshotRecord).items) this.items.set(i.id, i);
    }
    this.snapshotBytes = buf.length;
  }

  private async replayLog(): Promise<void> {
    const file = this.path(this.gen, 'log');
    let buf: Buffer;
    try {
      buf = await readFile(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        this.logBytes = 0;
        return;
      }
      throw e;
    }
    const { records, validBytes, torn } = decodeRecords(buf);
    for (const r of records) {
      if ((r as PutRecord).op === 'put') for (const i of (r as PutRecord).items) this.items.set(i.id, i);
    }
    if (torn) {
      this.opts.logger.warn(
        { file, droppedBytes: buf.length - validBytes },
        'content log ends with an incomplete write (the process stopped mid-write); dropping that last batch',
      );
      const fh = await open(file, 'r+');
      try {
        await fh.truncate(validBytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
    this.logBytes = validBytes;
  }

  /** Runs `fn` after every earlier write: one writer at a time. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  async putMany(items: readonly Item[]): Promise<void> {
    if (!items.length) return;
    await this.serial(async () => {
      if (this.broken) throw new StoreUnavailableError(`content store is read-only after a write error: ${this.broken.message}`);
      const log = this.log;
      if (!log) throw new StoreUnavailableError('content store is not open');
      const record = encodeRecord({ op: 'put', items } satisfies PutRecord);
      try {
        await log.write(record);
        await log.datasync();
      } catch (e) {
        await this.undoAppend(log, e as Error);
        throw new StoreUnavailableError(`could not write to ${this.opts.dir}: ${(e as Error).message}`);
      }
      this.logBytes += record.length;
      for (const i of items) this.items.set(i.id, i);
      if (this.logBytes > this.compactAfterBytes && this.logBytes > this.snapshotBytes) await this.compact();
    });
  }

  /** A failed append may have left part of a record; cut it so later appends stay readable. */
  private async undoAppend(log: FileHandle, cause: Error): Promise<void> {
    try {
      await log.truncate(this.logBytes);
      await log.sync();
    } catch (e) {
      this.broken = cause;
      this.opts.logger.error({ err: e, cause: cause.message }, 'content log could not be repaired; refusing writes until restart');
    }
  }

  /** Writes generation g+1 (snapshot of everything, empty log) and drops generation g. */
  private async compact(): Promise<void> {
    const next = this.gen + 1;
    const tmp = `${this.path(next, 'snapshot')}.tmp`;
    const all = [...this.items.values()];
    const fh = await open(tmp, 'w');
    let bytes = 0;
    try {
      for (let i = 0; i < all.length; i += SNAPSHOT_CHUNK) {
        const rec = encodeRecord({ op: 'snapshot', items: all.slice(i, i + SNAPSHOT_CHUNK) } satisfies SnapshotRecord);
        await fh.write(rec);
        bytes += rec.length;
      }
      const end = encodeRecord({ op: 'end', count: all.length } satisfies EndRecord);
      await fh.write(end);
      bytes += end.length;
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.path(next, 'snapshot'));
    const newLog = await open(this.path(next, 'log'), 'a');
    await this.syncDir();
    const oldGen = this.gen;
    await this.log?.close();
    this.log = newLog;
    this.gen = next;
    this.logBytes = 0;
    this.snapshotBytes = bytes;
    await rm(this.path(oldGen, 'log'), { force: true });
    await rm(this.path(oldGen, 'snapshot'), { force: true });
    await this.syncDir();
    this.opts.logger.info({ generation: next, items: all.length, bytes }, 'content store compacted');
  }

  /** Makes renames and creations in the folder durable. */
  private async syncDir(): Promise<void> {
    const dir = await open(this.opts.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  async getMany(ids: readonly string[]): Promise<Item[]> {
    return ids.map((id) => this.items.get(id)).filter((i): i is Item => i !== undefined);
  }

  /** A file store has no other writers. */
  onRemoteChange(): void {}

  async close(): Promise<void> {
    await this.serial(async () => {
      await this.log?.close();
      this.log = undefined;
      await this.releaseLock();
    });
  }

  private async releaseLock(): Promise<void> {
    const lock = this.lock;
    this.lock = undefined;
    await lock?.release();
  }
}
