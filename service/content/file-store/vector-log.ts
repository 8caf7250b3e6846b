import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { Logger } from 'pino';
import { readWholeFile } from '../../lib/read-whole-file';
import type { VectorRecord, VectorRecords } from '../content-store';
import { decodeVectorRecord, encodeVectorRecord } from '../vector-record';

/** The vector log's file in the store's folder. */
export const VECTOR_LOG_FILE = 'vectors.log';
/** A log smaller than this is never rewritten. */
const MIN_COMPACT_BYTES = 4 << 20;

const PUT = 1;
const FORGET = 2;

/** A frame: payload length (u32 LE), its CRC-32 (u32 LE), then the payload (kind byte + body). */
function frame(kind: number, body: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUInt32LE(body.length + 1, 0);
  head.writeUInt8(kind, 8);
  const payload = Buffer.concat([head.subarray(8), body]);
  head.writeUInt32LE(crc32(payload), 4);
  return Buffer.concat([head.subarray(0, 8), payload]);
}

/**
 * The file store's vectors (issue 41): `vectors.log` in `DATA_DIR`, an append-only file of
 * checksummed frames, each the record of one item (vector-record.ts) or the forgetting of an
 * id (a delete); the last frame of an id wins. Kept apart from the content's generations: vectors
 * can always be computed again, so their file never holds up a content write, and losing it costs
 * provider calls, not content. A torn or damaged frame ends the read there (what follows is
 * embedded again; the file is rewritten). When the file is more than twice what its current
 * records take (and past 4 MiB) it is rewritten with those only, records of ids the store no
 * longer holds left out (tmp file, fsync, rename).
 *
 * One process per folder (the store's lock), so a claim is always granted; a write checks the
 * store's own item (`updatedAt`) in-process.
 */
export class FileVectorLog implements VectorRecords {
  private readonly path: string;
  private records = new Map<string, { readonly bytes: Buffer; readonly record: VectorRecord }>();
  private fileBytes = 0;
  private liveBytes = 0;
  private file: FileHandle | undefined;
  private loaded: Promise<void> | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    dir: string,
    /** The stored item's `updated_at`, or undefined when the store does not hold the id. */
    private readonly updatedAt: (id: string) => string | undefined,
    private readonly logger: Logger,
  ) {
    this.path = join(dir, VECTOR_LOG_FILE);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private read(): Promise<void> {
    this.loaded ??= this.serial(async () => {
      let buf: Buffer;
      try {
        buf = await readWholeFile(this.path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        buf = Buffer.alloc(0);
      }
      let at = 0;
      while (at + 8 <= buf.length) {
        const n = buf.readUInt32LE(at);
        if (n < 1 || at + 8 + n > buf.length) break;
        const payload = buf.subarray(at + 8, at + 8 + n);
        if (crc32(payload) !== buf.readUInt32LE(at + 4)) break;
        this.apply(payload, buf.subarray(at, at + 8 + n));
        at += 8 + n;
      }
      if (at < buf.length)
        this.logger.warn(
          { file: this.path, kept_bytes: at, dropped_bytes: buf.length - at },
          'vector log: a torn or damaged frame; the records after it are dropped (those items are embedded again)',
        );
      this.fileBytes = at;
      if (at < buf.length) await this.rewrite();
    });
    return this.loaded;
  }

  private apply(payload: Buffer, bytes: Buffer): void {
    const kind = payload.readUInt8(0);
    if (kind === FORGET) {
      const id = payload.toString('utf8', 1);
      this.drop(id);
    } else if (kind === PUT) {
      const record = decodeVectorRecord(payload.subarray(1));
      if (!record) return;
      this.drop(record.id);
      this.records.set(record.id, { bytes, record });
      this.liveBytes += bytes.length;
    }
  }

  private drop(id: string): void {
    const old = this.records.get(id);
    if (!old) return;
    this.liveBytes -= old.bytes.length;
    this.records.delete(id);
  }

  private async append(frames: readonly Buffer[]): Promise<void> {
    const bytes = Buffer.concat(frames);
    this.file ??= await open(this.path, 'a');
    await this.file.write(bytes);
    await this.file.datasync();
    this.fileBytes += bytes.length;
    if (this.fileBytes > MIN_COMPACT_BYTES && this.fileBytes > 2 * this.liveBytes) await this.rewrite();
  }

  /** Writes the current records of held ids to a new file in place of the log. */
  private async rewrite(): Promise<void> {
    for (const id of [...this.records.keys()]) if (this.updatedAt(id) === undefined) this.drop(id);
    const tmp = `${this.path}.tmp`;
    const out = await open(tmp, 'w');
    try {
      for (const { bytes } of this.records.values()) await out.write(bytes);
      await out.sync();
    } finally {
      await out.close();
    }
    await this.file?.close();
    this.file = undefined;
    await rename(tmp, this.path);
    this.fileBytes = this.liveBytes;
  }

  async load(): Promise<VectorRecord[]> {
    await this.read();
    return [...this.records.values()].map((r) => r.record);
  }

  async getMany(ids: readonly string[]): Promise<VectorRecord[]> {
    await this.read();
    return ids.map((id) => this.records.get(id)?.record).filter((r): r is VectorRecord => r !== undefined);
  }

  async write(
    records: ReadonlyArray<{ readonly record: VectorRecord; readonly updatedAt: string }>,
  ): Promise<string[]> {
    await this.read();
    return this.serial(async () => {
      const kept = records.filter((r) => this.updatedAt(r.record.id) === r.updatedAt);
      const frames = kept.map((r) => frame(PUT, encodeVectorRecord(r.record)));
      if (!frames.length) return [];
      await this.append(frames);
      kept.forEach((r, k) => {
        this.drop(r.record.id);
        this.records.set(r.record.id, { bytes: frames[k], record: r.record });
        this.liveBytes += frames[k].length;
      });
      return kept.map((r) => r.record.id);
    });
  }

  /** Forgets the records of deleted ids (after the store's delete is durable). */
  async forget(ids: readonly string[]): Promise<void> {
    await this.read();
    await this.serial(async () => {
      const held = ids.filter((id) => this.records.has(id));
      if (!held.length) return;
      await this.append(held.map((id) => frame(FORGET, Buffer.from(id, 'utf8'))));
      for (const id of held) this.drop(id);
    });
  }

  async claim(): Promise<boolean> {
    return true;
  }

  async release(): Promise<void> {}

  /** A file store has no other writers. */
  onRemoteVectors(): void {}

  async close(): Promise<void> {
    await this.serial(async () => {
      await this.file?.close();
      this.file = undefined;
    });
    await rm(`${this.path}.tmp`, { force: true });
  }
}
