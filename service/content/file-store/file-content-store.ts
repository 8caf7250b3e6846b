import { mkdir } from 'node:fs/promises';
import type { Logger } from 'pino';
import { DEFAULT_CONTENT } from '../../../configs';
import { systemClock, type Clock } from '../../lib/clock';
import type { CompactionStatus, ContentStore, WriteStatus } from '../content-store';
import type { Item } from '../item';
import { CATALOGUE_TAIL_BYTES, CatalogueWriter } from './catalogue-writer';
import { Compaction } from './compaction';
import { COMPACTION_RETRY, CompactionRetries } from './compaction-retries';
import { acquireDirLock, type DirLock } from './dir-lock';
import { replayFolder } from './replay';
import { FileStoreState } from './store-state';
import { FileVectorLog } from './vector-log';
import { appendBatch } from './write-path';
import { SPACE_CHECK_MS, WriteHealth, statfsFreeBytes } from './write-health';

/** Options of `FileContentStore`. */
export interface FileContentStoreOptions {
  /** Folder of the store (`DATA_DIR`); created when missing. */
  readonly dir: string;
  readonly logger: Logger;
  /**
   * Compact (snapshot + fresh log) once the log is larger than this and than the last snapshot
   * (`CONTENT_COMPACTION_BYTES`).
   * @default DEFAULT_CONTENT.compactionBytes (8 MiB)
   */
  readonly compactAfterBytes?: number;
  /** Time of the compaction status (`/health`). @default the system clock */
  readonly clock?: Clock;
  /**
   * Backoff of compaction retries: the first retry `initialMs` after a failure, doubling per
   * consecutive failure up to `maxMs`.
   * @default COMPACTION_RETRY (1 s doubling to 5 min)
   */
  readonly compactionRetry?: { readonly initialMs: number; readonly maxMs: number };
  /**
   * A start that replayed more of the log than this (or than an eighth of what the catalogue
   * covers) after the catalogue (content-catalogue.ts) writes a new one in the background (one is
   * always written when none was usable).
   * @default CATALOGUE_TAIL_BYTES (1 MiB)
   */
  readonly catalogueTailBytes?: number;
  /**
   * While writes are refused for a full disk, how often the free space of the folder's file
   * system is looked at: once the refused write would fit, `writes()` is `ok` again without
   * waiting for a write to prove it.
   * @default SPACE_CHECK_MS (5 s)
   */
  readonly spaceCheckMs?: number;
  /** Bytes free to this process in the folder's file system. @default `statfs` (`bavail × bsize`) */
  readonly freeBytes?: (dir: string) => Promise<number>;
}

/**
 * The embedded durable store: generation `g` is a snapshot file `content-g.snapshot` plus an
 * append-only log `content-g.log`, both made of checksummed records (record-log.ts).
 *
 * - A write appends one record holding the whole batch, its items and the ids it deletes, and
 *   `fdatasync`s before resolving, so a batch is all-or-nothing and a delete as durable as a
 *   put: a kill mid-append leaves a torn last record that the next start detects by length and
 *   CRC and cuts off. Compaction writes only the items held, so a deleted item's text leaves the
 *   files with the generation that held it.
 * - Compaction writes `content-(g+1).snapshot.tmp`, fsyncs it, renames it into place and fsyncs
 *   the folder; only then is generation g deleted. A kill at any point leaves either
 *   generation complete.
 * - Compaction is not part of a write: a write resolves once its record is fsynced, and the
 *   compaction it makes due runs after it, in the same queue (never beside an append). A failed
 *   compaction (a full disk, a read-only folder) leaves generation g in use and complete, is
 *   logged and counted (`compaction()`), and is retried with backoff (`COMPACTION_RETRY`) by a
 *   timer until one succeeds; writes go on meanwhile, into the growing log.
 * - Damage costs the damaged records only: the reader skips them and keeps every intact record
 *   after them. Every generation present is loaded, oldest first, newer content winning and
 *   deletes applied; a whole snapshot replaces the older generations (it holds all they held
 *   but what was deleted before it), a damaged or missing one is merged with them, so it loses
 *   nothing that is on disk. After damage, a missing snapshot or several generations, `load` logs what it skipped
 *   and rewrites everything readable into a new generation; damaged files are kept as
 *   `<file>.damaged`.
 * - Each item's record carries the plain text of its body (`ItemsRecord`; null when it is the
 *   body), so a start does not clean every body's Markdown again.
 * - One process per folder: two replicas must not share a `DATA_DIR` (use `KVSTORE_URL`).
 *   `load` takes `data-dir.lock` in the folder (dir-lock.ts) and refuses to open a folder that a
 *   live process holds; `close` releases it.
 *
 * Its parts, one a file: the files' names (generation-files.ts) and records (log-records.ts,
 * record-log.ts), opening and replay (replay.ts), the write path (write-path.ts) and its health
 * (write-health.ts), compaction (compaction.ts) with its retries and health
 * (compaction-retries.ts), and the catalogue's scheduling (catalogue-writer.ts), sharing one
 * `FileStoreState` (store-state.ts).
 */
export class FileContentStore implements ContentStore {
  readonly kind = 'file' as const;
  /** The items' vectors, in `vectors.log` beside the content (vector-log.ts). */
  readonly vectors: FileVectorLog;
  private readonly state: FileStoreState;
  private readonly health: WriteHealth;
  private readonly compactor: Compaction;
  private readonly retries: CompactionRetries;
  private readonly catalogue: CatalogueWriter;
  private queue: Promise<unknown> = Promise.resolve();
  private lock: DirLock | undefined;

  constructor(private readonly opts: FileContentStoreOptions) {
    const clock = opts.clock ?? systemClock;
    this.state = new FileStoreState(opts.dir, opts.logger);
    this.health = new WriteHealth({
      dir: opts.dir,
      logger: opts.logger,
      clock,
      spaceCheckMs: opts.spaceCheckMs ?? SPACE_CHECK_MS,
      freeBytes: opts.freeBytes ?? statfsFreeBytes,
    });
    this.compactor = new Compaction(this.state, opts.compactAfterBytes ?? DEFAULT_CONTENT.compactionBytes, () =>
      this.catalogue.save(),
    );
    this.retries = new CompactionRetries(this.state, this.compactor, {
      clock,
      retry: opts.compactionRetry ?? COMPACTION_RETRY,
      serial: (fn) => this.serial(fn),
    });
    this.catalogue = new CatalogueWriter(this.state, opts.catalogueTailBytes ?? CATALOGUE_TAIL_BYTES);
    this.vectors = new FileVectorLog(opts.dir, (id) => this.state.allItems().get(id)?.updated_at, opts.logger);
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
    const { gens, covered, missing, damagedFiles, catalogueUpgrade } = await replayFolder(this.state);
    if (missing || damagedFiles.length || gens.length > 1) {
      // One consistent generation from everything readable, so that the next start is a
      // normal one; damaged files are kept beside it for inspection, never deleted. When that
      // fails the files as they are load again (that is how they were just loaded), and the
      // rewrite is retried in the background.
      this.compactor.rewriteWanted = true;
      this.compactor.keepDamaged = damagedFiles;
      await this.retries.run();
    }
    const loaded = this.state.ordered();
    this.opts.logger.info(
      { dir: this.opts.dir, items: loaded.length, generation: this.state.gen, catalogue: covered !== undefined },
      'content store loaded',
    );
    // A new catalogue when none was usable, or when the log after it is long (for its size).
    this.catalogue.afterStart(covered, catalogueUpgrade);
    return loaded;
  }

  /** Settles once the catalogue being written, if any, is written (tests, benchmarks). */
  catalogueWritten(): Promise<void> {
    return this.catalogue.written();
  }

  /** Runs `fn` after every earlier write: one writer at a time. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  async write(items: readonly Item[], removed: readonly string[] = []): Promise<void> {
    if (!items.length && !removed.length) return;
    await this.serial(async () => {
      await appendBatch(this.state, this.health, items, removed);
      // After this write, not inside it: its record is durable, so it resolves whatever the
      // compaction does. While a failed compaction waits for its retry, writes do not start
      // another one.
      this.retries.afterWrite();
    });
    // After the delete is durable; a record left by a crash here belongs to no item and is ignored.
    if (removed.length)
      await this.vectors
        .forget(removed)
        .catch((e: Error) => this.opts.logger.warn({ err: e.message }, 'vector log: could not forget deleted items'));
  }

  /** How compaction is doing, for `/health` and the failure counter. */
  compaction(): CompactionStatus {
    return this.retries.status();
  }

  /** Whether writes go through now, for `/health` and the write-state gauge. */
  writes(): WriteStatus {
    return this.health.status(this.state.broken !== undefined);
  }

  async getMany(ids: readonly string[]): Promise<Item[]> {
    const all = this.state.allItems();
    return ids.map((id) => all.get(id)).filter((i): i is Item => i !== undefined);
  }

  /** A file store has no other writers. */
  onRemoteChange(): void {}

  async close(): Promise<void> {
    await this.vectors.close();
    this.retries.stop();
    this.health.stop();
    await this.catalogue.stop();
    await this.serial(async () => {
      await this.state.log?.close();
      this.state.log = undefined;
      await this.releaseLock();
    });
  }

  private async releaseLock(): Promise<void> {
    const lock = this.lock;
    this.lock = undefined;
    await lock?.release();
  }
}
