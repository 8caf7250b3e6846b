import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { readWholeFile } from '../../lib/read-whole-file';
import { writeAll } from '../../lib/write-all';
import type { SealedIndex } from './merge';
import { contentFingerprint, decodeSegment, encodeSegment, SegmentError } from './segment-file';
import { yieldToLoop } from '../../lib/yield-to-loop';

/**
 * The folder of the persisted segment: `INDEX_DIR` when set (`off`: none), else
 * `<DATA_DIR>/search-index` with the file store in `DATA_DIR`, else none (a Redis or memory
 * store: the stack sets `INDEX_DIR` to a folder in the pod's emptyDir).
 */
export function segmentDir(
  indexDir: string | undefined,
  dataDir: string,
  store: 'file' | 'kvstore' | 'memory',
): string | undefined {
  if (indexDir === 'off') return undefined;
  if (indexDir !== undefined) return indexDir;
  return store === 'file' ? join(dataDir, 'search-index') : undefined;
}

/** Name of the segment file in its folder. */
export const SEGMENT_FILE = 'search-segment.bin';

/** Options of `SegmentStore`. */
export interface SegmentStoreOptions {
  /** Folder of the segment file; created when missing. */
  readonly dir: string;
  readonly logger: Logger;
}

/** A segment read back, checked. */
export interface LoadedSegment {
  readonly sealed: SealedIndex;
  /** Fingerprint of the content it holds (`contentFingerprint` of its documents' fingerprints). */
  readonly content: string;
  readonly bytes: number;
}

/**
 * Where the search index's base segment is kept between starts: one file in a local folder
 * (beside the file store's data, or `INDEX_DIR`). Writes happen off the request path (the
 * encoding yields between slices, the I/O is asynchronous) and are atomic: a temp file with a
 * unique name, fsynced, renamed over the old one, the folder fsynced. A newer segment asked for
 * while one is being written replaces any not yet started (only the latest is written). Reads
 * check everything (`decodeSegment`); an unusable file is reported and left for the next write
 * to replace.
 */
export class SegmentStore {
  readonly file: string;
  private pending: { sealed: SealedIndex; key: string } | undefined;
  private writing: Promise<void> | undefined;
  private closed = false;
  private abandoned = false;
  // The latest segment asked for (`save`) and the latest written whole, to tell whether the file is current.
  private asked: SealedIndex | undefined;
  private written: SealedIndex | undefined;
  private writes = 0;
  private prefetched: Promise<Buffer> | undefined;

  constructor(private readonly opts: SegmentStoreOptions) {
    this.file = join(opts.dir, SEGMENT_FILE);
  }

  get logger(): Logger {
    return this.opts.logger;
  }

  /**
   * Starts reading the segment file (one read request, off the event loop), for the next `read`:
   * a start calls this before loading the content, so the file is in memory by the time the
   * index wants it.
   */
  prefetch(): void {
    if (this.prefetched) return;
    this.prefetched = readWholeFile(this.file);
    this.prefetched.catch(() => undefined);
  }

  /** The stored segment made with `key`, or undefined (none, or unusable: logged with the reason). */
  async read(key: string): Promise<LoadedSegment | undefined> {
    const reading = this.prefetched ?? readWholeFile(this.file);
    reading.catch(() => undefined);
    this.prefetched = undefined;
    // Temp files of writes cut short (the process stopped mid-write) are never renamed: drop them.
    const names = await readdir(this.opts.dir).catch(() => [] as string[]);
    for (const n of names)
      if (n.startsWith(`${SEGMENT_FILE}.`) && n.endsWith('.tmp')) await rm(join(this.opts.dir, n), { force: true });
    let buf: Buffer;
    try {
      buf = await reading;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        this.logger.info({ file: this.file }, 'no persisted search segment: building the index from the content');
      else
        this.logger.warn(
          { file: this.file, err: (e as Error).message },
          'persisted search segment unreadable: building the index from the content',
        );
      return undefined;
    }
    try {
      const { sealed, content } = await decodeSegment(buf, key, yieldToLoop);
      return { sealed, content, bytes: buf.length };
    } catch (e) {
      if (!(e instanceof SegmentError)) throw e;
      this.logger.warn(
        { file: this.file, reason: e.message },
        `persisted search segment not used (${e.message}): building the index from the content; the next segment written replaces it`,
      );
      return undefined;
    }
  }

  /** Writes `sealed` in the background (the latest one asked for wins); `flush` waits for it. */
  save(sealed: SealedIndex, key: string): void {
    if (this.closed) return;
    this.asked = sealed;
    this.pending = { sealed, key };
    this.writing ??= this.drain();
  }

  /** Settles once every segment asked for is written (or failed: logged). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /**
   * Takes no more segments and waits for the write under way, which stops before touching the
   * disk if it has not yet (shutdown: the last segment written stays, and is used or replayed
   * at the next start).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.pending = undefined;
    if (!this.abandoned) await this.flush();
  }

  /**
   * Like `close`, without waiting: takes no more segments, drops the one not started, and leaves
   * the write under way to finish or to be cut short by the exit (its temp file is never renamed
   * and the next start deletes it; the segment in place stays whole). For a stop out of time.
   */
  abandon(): void {
    this.abandoned = true;
    this.closed = true;
    this.pending = undefined;
  }

  /**
   * Whether the file holds the latest segment asked for (or none was asked for since the start:
   * the file is the one read, if any). False while one is pending or after a failed write.
   */
  get current(): boolean {
    return this.asked === this.written;
  }

  /** Segments written whole since the start. */
  get writeCount(): number {
    return this.writes;
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending) {
        const { sealed, key } = this.pending;
        this.pending = undefined;
        await this.write(sealed, key);
      }
    } finally {
      this.writing = undefined;
    }
  }

  private async write(sealed: SealedIndex, key: string): Promise<void> {
    const started = performance.now();
    const tmp = `${this.file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    try {
      await yieldToLoop();
      const parts = await encodeSegment(sealed, { key, content: contentFingerprint(sealed.fingerprints) }, yieldToLoop);
      if (this.closed) return;
      await mkdir(this.opts.dir, { recursive: true });
      const fh = await open(tmp, 'w');
      let bytes = 0;
      try {
        // Every byte of each part or an error: a short count is what a full disk gives, and a
        // segment renamed into place short would only be found damaged at the next start.
        for (const p of parts) {
          await writeAll(fh, p);
          bytes += p.length;
        }
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, this.file);
      const dir = await open(this.opts.dir, 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
      this.written = sealed;
      this.writes += 1;
      this.logger.info(
        { file: this.file, documents: sealed.ids.length, bytes, ms: Math.round(performance.now() - started) },
        'search segment persisted',
      );
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      this.logger.warn(
        { file: this.file, err: (e as Error).message },
        'could not persist the search segment; the next start rebuilds the index (or uses an older segment, re-indexing what changed)',
      );
    }
  }
}
