import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, statfs, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { DEFAULT_CONTENT } from '../../../configs';
import { crc32 } from 'node:zlib';
import { readWholeFile } from '../../read-whole-file';
import { systemClock, type Clock } from '../../clock';
import type { Item } from '../item';
import { CatalogueError, buildCatalogue, decodeCatalogue, encodeCatalogue, typeOf, type Catalogue, type CatalogueSource } from './content-catalogue';
import { acquireDirLock, type DirLock } from './dir-lock';
import { fromRecord, type ItemRecord } from '../item-record';
import { lazyItem, unwrapItem } from '../lazy-item';
import { PLAIN_TEXT_VERSION, keepPlainText, plainTextOf } from '../plain-text';
import { decodeRecords, encodeRecord, encodeRecordInSteps, type ByteRange } from './record-log';
import { stepper, yieldToLoop } from '../../lib/yield-to-loop';
import { writeAll } from '../../write-all';
import { StoreUnavailableError, type CompactionStatus, type ContentStore, type WriteStatus } from '../content-store';

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

/** How often a store refusing writes for a full disk looks whether space has returned. */
export const SPACE_CHECK_MS = 5000;

/** Error codes of a file system with no room: the disk (`ENOSPC`) or the user's quota (`EDQUOT`). */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

async function statfsFreeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/** Backoff of compaction retries: 1 s, 2 s, 4 s, … doubling to at most 5 minutes between attempts. */
export const COMPACTION_RETRY = { initialMs: 1000, maxMs: 5 * 60_000 } as const;

/** The error code (`ENOSPC`, `EACCES`, …) or name of a failure: what health shows, never a path. */
function errorCode(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code)) return code;
  return e instanceof Error ? e.name : 'Error';
}

/**
 * The items of a put or snapshot record. Written as the items' own fields plus, beside them,
 * their plain texts (`plain`, `null` where the plain text is the body itself, as it is for a
 * body without Markdown) of `plain_text_version`: a load then keeps the parsed objects as the
 * items (no copy per item) and reads no body twice. Records written before carry the plain text
 * inside each item (`ItemRecord`, no `plain`); both load. A version that knows only the older
 * form reads the items of the newer one and computes their plain text at first use.
 */
interface ItemsRecord {
  items: ItemRecord[];
  plain?: Array<string | null>;
  plain_text_version?: number;
}
interface PutRecord extends ItemsRecord {
  op: 'put';
}
interface SnapshotRecord extends ItemsRecord {
  op: 'snapshot';
}

/**
 * The items and their plain texts, as a record holds them; `step()` (time-steps.ts) after each
 * item: for the 10,000 items of a full upload this was ~5 ms more of the write's one step.
 */
async function itemsRecord(stored: readonly Item[], step: () => Promise<void> | undefined): Promise<ItemsRecord> {
  const items: ItemRecord[] = [];
  const plain: Array<string | null> = [];
  for (const s of stored) {
    const i = unwrapItem(s);
    const text = plainTextOf(i);
    items.push(i);
    plain.push(text === i.body ? null : text);
    await step();
  }
  return { items, plain, plain_text_version: PLAIN_TEXT_VERSION };
}

/** The items of a record (either form), each with its stored plain text when it is of this version. */
function recordItems(r: ItemsRecord): Item[] {
  const { items, plain } = r;
  if (!Array.isArray(plain) || plain.length !== items.length) return items.map(fromRecord);
  if (r.plain_text_version !== PLAIN_TEXT_VERSION) return items;
  for (let k = 0; k < items.length; k++) keepPlainText(items[k], plain[k] ?? items[k].body);
  return items;
}
interface EndRecord {
  op: 'end';
  count: number;
}

const SNAPSHOT_CHUNK = 500;

function isPutRecord(r: unknown): r is PutRecord {
  return (r as PutRecord | null)?.op === 'put' && Array.isArray((r as PutRecord).items);
}
function isSnapshotRecord(r: unknown): r is SnapshotRecord {
  return (r as SnapshotRecord | null)?.op === 'snapshot' && Array.isArray((r as SnapshotRecord).items);
}
function isEndRecord(r: unknown): r is EndRecord {
  return (r as EndRecord | null)?.op === 'end' && typeof (r as EndRecord).count === 'number';
}

/** Damaged ranges plus the torn tail, for a file that should have neither. */
function tornToo(damaged: readonly ByteRange[], keepBytes: number, length: number): ByteRange[] {
  return keepBytes < length ? [...damaged, { start: keepBytes, end: length }] : [...damaged];
}

const NAME = /^content-(\d{1,12})\.(snapshot|log)$/;

/** The catalogue's file in the folder (content-catalogue.ts). */
export const CATALOGUE_FILE = 'content.catalogue';

/** A start that replayed more of the log than this after the catalogue writes a new catalogue. */
export const CATALOGUE_TAIL_BYTES = 1 << 20;

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
 * - Compaction is not part of a write: a write resolves once its record is fsynced, and the
 *   compaction it makes due runs after it, in the same queue (never beside an append). A failed
 *   compaction (a full disk, a read-only folder) leaves generation g in use and complete, is
 *   logged and counted (`compaction()`), and is retried with backoff (`COMPACTION_RETRY`) by a
 *   timer until one succeeds; writes go on meanwhile, into the growing log.
 * - Damage costs the damaged records only: the reader skips them and keeps every intact record
 *   after them. Every generation present is loaded, oldest first, newer content winning (items
 *   are never deleted), so a missing snapshot or a restored old one loses nothing that is on
 *   disk. After damage, a missing snapshot or several generations, `load` logs what it skipped
 *   and rewrites everything readable into a new generation; damaged files are kept as
 *   `<file>.damaged`.
 * - Each item's record carries the plain text of its body (`ItemsRecord`; null when it is the
 *   body), so a start does not clean every body's Markdown again.
 * - One process per folder: two replicas must not share a `DATA_DIR` (use `KVSTORE_URL`).
 *   `load` takes `data-dir.lock` in the folder (dir-lock.ts) and refuses to open a folder that a
 *   live process holds; `close` releases it.
 */
export class FileContentStore implements ContentStore {
  readonly kind = 'file' as const;
  /** Every item by id; while `base` is set, only those loaded or written after the catalogue's. */
  private items = new Map<string, Item>();
  /**
   * The items made from the catalogue at the start, in order, kept apart from `items` until a
   * compaction or a look-up by id needs one map of everything (`allItems`): a million ids entered
   * into a map cost most of a second, and a start needs only the list (`ordered`).
   */
  private base: Item[] | undefined;
  private readonly compactAfterBytes: number;
  private gen = 0;
  private log: FileHandle | undefined;
  private logBytes = 0;
  private snapshotBytes = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private broken: Error | undefined;
  private lock: DirLock | undefined;
  private readonly clock: Clock;
  private readonly retry: { readonly initialMs: number; readonly maxMs: number };
  /** A compaction is in the queue. */
  private compactionQueued = false;
  /** Recovery at load wants a rewrite that has not happened yet (whatever the log's size). */
  private rewriteWanted = false;
  /** Damaged files still to be renamed to `<file>.damaged` once a new generation is in use. */
  private keepDamaged: string[] = [];
  /** A compaction switched generations but could not clean up after itself. */
  private cleanupWanted = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private consecutiveFailures = 0;
  private lastFailureAt: number | undefined;
  private lastError: string | undefined;
  private nextRetryAt: number | undefined;
  /** The catalogue being written (in the background), and whether another is wanted after it. */
  private catalogueJob: Promise<void> | undefined;
  private catalogueAgain = false;
  /** The start used a catalogue of the older shape (content-catalogue.ts): write a new one. */
  private catalogueUpgrade = false;
  private closing = false;
  /** The last write's failure (its code) while it is not followed by a success. */
  private writeError: string | undefined;
  private writeFailures = 0;
  private lastWriteFailureAt: number | undefined;
  private lastWriteError: string | undefined;
  /** Bytes of the write refused for want of space: what must fit before it is worth trying again. */
  private refusedBytes = 0;
  private spaceTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: FileContentStoreOptions) {
    this.compactAfterBytes = opts.compactAfterBytes ?? DEFAULT_CONTENT.compactionBytes;
    this.clock = opts.clock ?? systemClock;
    this.retry = opts.compactionRetry ?? COMPACTION_RETRY;
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
    for (const n of names) if (n.endsWith('.tmp')) await rm(join(this.opts.dir, n), { force: true });
    const files = new Map<number, { snapshot: boolean; log: boolean }>();
    for (const n of names) {
      const m = NAME.exec(n);
      if (!m) continue;
      const f = files.get(Number(m[1])) ?? { snapshot: false, log: false };
      f[m[2] as 'snapshot' | 'log'] = true;
      files.set(Number(m[1]), f);
    }
    const gens = [...files.keys()].sort((a, b) => a - b);
    this.gen = gens[gens.length - 1] ?? 0;
    this.items.clear();
    this.base = undefined;
    this.snapshotBytes = 0;
    this.logBytes = 0;
    // Items are never deleted, so every generation present is replayed, oldest first, newer
    // content winning. Normally that is one generation; more are left by a crash mid-compaction
    // or put back by an operator (a restored snapshot), and both are merged rather than dropped.
    const damagedFiles: string[] = [];
    // Every file is read at once (one read request each, off the event loop) and parsed in
    // order: a log is read while the snapshot before it is parsed.
    const reads = new Map<string, Promise<Buffer>>();
    const catalogueRead = readWholeFile(join(this.opts.dir, CATALOGUE_FILE));
    catalogueRead.catch(() => undefined);
    for (const g of gens) {
      for (const kind of ['snapshot', 'log'] as const) {
        if (!files.get(g)?.[kind]) continue;
        const read = readWholeFile(this.path(g, kind));
        read.catch(() => undefined);
        reads.set(this.path(g, kind), read);
      }
    }
    // One generation (the normal case) with a catalogue that matches its files: items are made
    // from the catalogue, parsed at first use, and only the log after it is replayed.
    const covered = gens.length === 1 ? await this.fromCatalogue(gens[0], files.get(gens[0])!, reads, catalogueRead) : undefined;
    for (const g of gens) {
      if (covered === undefined && files.get(g)?.snapshot && !(await this.readSnapshot(g, reads))) damagedFiles.push(this.path(g, 'snapshot'));
      if (files.get(g)?.log && !(await this.replayLog(g, reads, covered ?? 0))) damagedFiles.push(this.path(g, 'log'));
    }
    const missing = this.gen > 0 && !files.get(this.gen)?.snapshot;
    if (missing) {
      const file = this.path(this.gen, 'snapshot');
      this.opts.logger.error(
        { file, items: this.items.size, loadedFrom: gens.map((g) => `content-${g}.*`) },
        `content snapshot ${file} is missing: started from the other content files (${this.items.size} items); items that only that snapshot held are not loaded. To get them back, put that file (or a backup of it) into DATA_DIR under the same name and restart: older generations are merged in, newer content wins`,
      );
    }
    this.log = await open(this.path(this.gen, 'log'), 'a');
    await this.syncDir();
    if (missing || damagedFiles.length || gens.length > 1) {
      // One consistent generation from everything readable, so that the next start is a
      // normal one; damaged files are kept beside it for inspection, never deleted. When that
      // fails the files as they are load again (that is how they were just loaded), and the
      // rewrite is retried in the background.
      this.rewriteWanted = true;
      this.keepDamaged = damagedFiles;
      await this.runCompaction();
    }
    const loaded = this.ordered();
    this.opts.logger.info({ dir: this.opts.dir, items: loaded.length, generation: this.gen, catalogue: covered !== undefined }, 'content store loaded');
    // A new catalogue when none was usable, or when the log after it is long (for its size).
    const tail = covered === undefined || this.catalogueUpgrade ? Infinity : this.logBytes - covered;
    this.catalogueUpgrade = false;
    if (tail > Math.min(this.opts.catalogueTailBytes ?? CATALOGUE_TAIL_BYTES, (this.snapshotBytes + (covered ?? 0)) / 8)) this.saveCatalogue();
    return loaded;
  }

  /**
   * Every item in the store's order, as one map of them would list it: the catalogue's items with
   * later versions in their place, then the ids they do not hold, in the order first written.
   */
  private ordered(): Item[] {
    const { base, items } = this;
    if (!base) return [...items.values()];
    if (items.size === 0) return base.slice();
    const out = new Array<Item>(base.length);
    const replaced = new Set<string>();
    for (let i = 0; i < base.length; i++) {
      const later = items.get(base[i].id);
      if (later === undefined) out[i] = base[i];
      else {
        out[i] = later;
        replaced.add(later.id);
      }
    }
    for (const [id, item] of items) if (!replaced.has(id)) out.push(item);
    return out;
  }

  /** The map of every item (the catalogue's items entered into it now, once, if still apart). */
  private allItems(): Map<string, Item> {
    const { base } = this;
    if (base) {
      const all = new Map<string, Item>();
      for (const item of base) all.set(item.id, item);
      for (const [id, item] of this.items) all.set(id, item);
      this.items = all;
      this.base = undefined;
    }
    return this.items;
  }

  /**
   * Fills the items from the catalogue when it matches generation `gen`'s files (every byte it
   * covers, by CRC-32); resolves with how much of the log it covers (the rest is replayed), or
   * undefined (none, or not usable: logged) when the files must be parsed.
   */
  private async fromCatalogue(
    gen: number,
    present: { snapshot: boolean; log: boolean },
    reads: ReadonlyMap<string, Promise<Buffer>>,
    read: Promise<Buffer>,
  ): Promise<number | undefined> {
    const file = join(this.opts.dir, CATALOGUE_FILE);
    let cat: Catalogue;
    try {
      cat = decodeCatalogue(await read);
    } catch (e) {
      if (e instanceof CatalogueError) this.opts.logger.warn({ file, reason: e.message }, `content catalogue not used (${e.message}): parsing the content files; a new one is written after the start`);
      else if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.opts.logger.warn({ file, err: (e as Error).message }, 'content catalogue unreadable: parsing the content files');
      return undefined;
    }
    const names = [...(present.snapshot ? [`content-${gen}.snapshot`] : []), ...(present.log ? [`content-${gen}.log`] : [])];
    const mismatch = (reason: string) => {
      this.opts.logger.warn({ file, reason }, `content catalogue not used (${reason}): parsing the content files; a new one is written after the start`);
      return undefined;
    };
    if (cat.files.length !== names.length || cat.files.some((f, i) => f.name !== names[i])) {
      // Normal after a compaction that was not followed by a catalogue yet (a stop right after it).
      this.opts.logger.info({ file, files: names }, 'content catalogue is of another generation: parsing the content files; a new one is written after the start');
      return undefined;
    }
    const sources: Buffer[] = [];
    for (const f of cat.files) {
      const buf = await reads.get(join(this.opts.dir, f.name))!;
      const snapshot = f.name.endsWith('.snapshot');
      if (buf.length < f.bytes || (snapshot && buf.length !== f.bytes)) return mismatch(`${f.name} is shorter or longer than it covers`);
      if (crc32(buf.subarray(0, f.bytes)) !== f.crc) return mismatch(`${f.name} changed since it was made`);
      sources.push(buf);
      if (snapshot) this.snapshotBytes = buf.length;
    }
    const { ids, types, fingerprint, start, end, plainStart, plainEnd, listing } = cat;
    const base = new Array<Item>(ids.length);
    for (let i = 0; i < ids.length; i++) {
      base[i] = lazyItem(ids[i], typeOf(types[i]), fingerprint[i], sources[cat.file[i]], start[i], end[i], plainStart[i], plainEnd[i], listing, i);
    }
    this.base = base;
    if (!listing) {
      // A catalogue of the older shape: used, and replaced after the start by one with listing keys.
      this.opts.logger.info({ file }, 'content catalogue has no listing keys (older version): used, and a new one is written after the start');
      this.catalogueUpgrade = true;
    }
    return cat.files.find((f) => f.name.endsWith('.log'))?.bytes ?? 0;
  }

  /**
   * Writes the catalogue of the current generation in the background (content-catalogue.ts): of
   * the items as they are now and the files up to the last acknowledged write, read back from
   * disk. Atomic (temp file, fsync, rename, folder fsync); one at a time, a request meanwhile
   * runs after it. A failure is logged and costs only the next start's speed.
   */
  private saveCatalogue(): void {
    if (this.catalogueJob) {
      this.catalogueAgain = true;
      return;
    }
    this.catalogueJob = (async () => {
      do {
        this.catalogueAgain = false;
        await this.writeCatalogue();
      } while (this.catalogueAgain && !this.closing);
    })().finally(() => {
      this.catalogueJob = undefined;
    });
  }

  /** Settles once the catalogue being written, if any, is written (tests, benchmarks). */
  async catalogueWritten(): Promise<void> {
    while (this.catalogueJob) await this.catalogueJob;
  }

  private async writeCatalogue(): Promise<void> {
    const file = join(this.opts.dir, CATALOGUE_FILE);
    const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    const started = performance.now();
    try {
      await yieldToLoop();
      if (this.closing || this.broken) return;
      const gen = this.gen;
      const logBytes = this.logBytes;
      const items = this.ordered();
      const sources: CatalogueSource[] = [];
      try {
        sources.push({ name: `content-${gen}.snapshot`, buf: await readWholeFile(this.path(gen, 'snapshot')), snapshot: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || gen > 0) throw e;
      }
      const log = await readWholeFile(this.path(gen, 'log'));
      if (log.length < logBytes) throw new Error('the log is shorter than its acknowledged writes');
      sources.push({ name: `content-${gen}.log`, buf: log.subarray(0, logBytes), snapshot: false });
      const cat = await buildCatalogue(items, sources, yieldToLoop);
      if (!cat) {
        this.opts.logger.warn({ file }, 'content catalogue not written: the content files do not hold the loaded items intact');
        return;
      }
      if (this.closing || gen !== this.gen) return;
      const fh = await open(tmp, 'w');
      try {
        await writeAll(fh, encodeCatalogue(cat));
        await fh.sync();
      } finally {
        await fh.close();
      }
      if (this.closing || gen !== this.gen) {
        await rm(tmp, { force: true });
        return;
      }
      await rename(tmp, file);
      await this.syncDir();
      this.opts.logger.info({ file, items: items.length, generation: gen, ms: Math.round(performance.now() - started) }, 'content catalogue written');
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      this.opts.logger.warn({ file, err: (e as Error).message }, 'content catalogue not written; the next start parses the content files');
    }
  }

  /** Loads the readable part of snapshot `gen`; false when the file is damaged. */
  private async readSnapshot(gen: number, reads: ReadonlyMap<string, Promise<Buffer>>): Promise<boolean> {
    const file = this.path(gen, 'snapshot');
    const buf = await reads.get(file)!;
    const { records, damaged, torn, keepBytes } = decodeRecords(buf);
    let count = 0;
    let expected: number | undefined;
    for (const r of records) {
      if (isSnapshotRecord(r)) {
        for (const i of recordItems(r)) this.items.set(i.id, i);
        count += r.items.length;
      } else if (isEndRecord(r)) expected = r.count;
    }
    if (gen === this.gen) this.snapshotBytes = buf.length;
    // A snapshot is renamed into place only once complete and fsynced: damage here is
    // corruption, not a crash.
    if (!damaged.length && !torn && expected === count) return true;
    const lost = expected === undefined ? 'an unknown number of' : String(Math.max(0, expected - count));
    this.opts.logger.error(
      { file, loadedItems: count, expectedItems: expected ?? null, damagedRanges: tornToo(damaged, keepBytes, buf.length) },
      `content snapshot ${file} is damaged: loaded the ${count} items of its intact records and every log; ${lost} items in damaged records are not loaded. The file is kept as ${file}.damaged; to get those items back, put a backup of ${file} into DATA_DIR under that name and restart: older generations are merged in, newer content wins`,
    );
    return false;
  }

  /** Replays log `gen`; cuts a torn tail off the current log; false when the log is damaged. */
  private async replayLog(gen: number, reads: ReadonlyMap<string, Promise<Buffer>>, from = 0): Promise<boolean> {
    const file = this.path(gen, 'log');
    const buf = await reads.get(file)!;
    const tail = decodeRecords(buf.subarray(from));
    const { records, torn } = tail;
    const damaged = tail.damaged.map((r) => ({ start: r.start + from, end: r.end + from }));
    const keepBytes = tail.keepBytes + from;
    for (const r of records) if (isPutRecord(r)) for (const i of recordItems(r)) this.items.set(i.id, i);
    if (damaged.length) {
      this.opts.logger.error(
        { file, damagedRanges: damaged, damagedBytes: damaged.reduce((n, r) => n + r.end - r.start, 0), keptRecords: records.length },
        `content log ${file} is damaged: skipped ${damaged.length} damaged region(s) and loaded the ${records.length} intact records around them; writes in the damaged bytes are not loaded. The file is kept as ${file}.damaged`,
      );
    }
    if (torn) {
      this.opts.logger.warn(
        { file, droppedBytes: buf.length - keepBytes, droppedRange: { start: keepBytes, end: buf.length } },
        'content log ends with an incomplete write (the process stopped mid-write); dropping that last batch',
      );
      // Only the tail after the last newline: every intact record stays, and the next append
      // starts on a fresh line.
      if (gen === this.gen) {
        const fh = await open(file, 'r+');
        try {
          await fh.truncate(keepBytes);
          await fh.sync();
        } finally {
          await fh.close();
        }
      }
    }
    if (gen === this.gen) this.logBytes = keepBytes;
    return damaged.length === 0;
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
      if (this.broken) throw new StoreUnavailableError(`content store is read-only after a write error (${errorCode(this.broken)}); nothing was stored`);
      const log = this.log;
      if (!log) throw new StoreUnavailableError('content store is not open');
      const step = stepper();
      const record = await encodeRecordInSteps({ op: 'put', ...(await itemsRecord(items, step)) } satisfies PutRecord, step);
      try {
        // Every byte or an error: a disk that fills mid-append returns a short count, and a
        // record acknowledged on that count would be cut off as a torn tail at the next start.
        await writeAll(log, record);
        await log.datasync();
      } catch (e) {
        await this.undoAppend(log, e as Error);
        throw this.writeRefused(e, record.length);
      }
      this.logBytes += record.length;
      this.writeSucceeded();
      // In steps too: the writes queue behind this one until all are in.
      for (const i of items) {
        this.items.set(i.id, i);
        await step();
      }
      // After this write, not inside it: its record is durable, so it resolves whatever the
      // compaction does. While a failed compaction waits for its retry, writes do not start
      // another one.
      if (this.compactionDue() && !this.compactionQueued && !this.retryTimer) {
        this.compactionQueued = true;
        void this.serial(() => this.runCompaction());
      }
    });
  }

  private compactionDue(): boolean {
    return this.rewriteWanted || (this.logBytes > this.compactAfterBytes && this.logBytes > this.snapshotBytes);
  }

  /**
   * Compacts if still due, or finishes the clean-up of one that switched generations; never
   * throws: a failure is recorded and retried. Runs in the queue (or in `load`).
   */
  private async runCompaction(): Promise<void> {
    this.compactionQueued = false;
    if (!this.log || this.broken || !(this.compactionDue() || this.cleanupWanted)) return;
    try {
      if (this.compactionDue()) await this.compact();
      else await this.cleanUp();
    } catch (e) {
      this.compactionFailed(e);
      return;
    }
    if (this.consecutiveFailures > 0) {
      this.opts.logger.info({ generation: this.gen, failedAttempts: this.consecutiveFailures }, 'content store compaction succeeded again');
    }
    this.consecutiveFailures = 0;
    this.nextRetryAt = undefined;
  }

  private compactionFailed(e: unknown): void {
    this.failures++;
    this.consecutiveFailures++;
    this.lastFailureAt = this.clock.now();
    this.lastError = errorCode(e);
    if (this.broken) {
      this.nextRetryAt = undefined;
      return;
    }
    const delay = Math.min(this.retry.maxMs, this.retry.initialMs * 2 ** Math.min(30, this.consecutiveFailures - 1));
    this.nextRetryAt = this.lastFailureAt + delay;
    this.opts.logger.error(
      { err: { code: this.lastError, message: (e as Error | null)?.message }, dir: this.opts.dir, generation: this.gen, logBytes: this.logBytes, failures: this.failures, retryInMs: delay },
      'content store compaction failed; writes go on into the current log (nothing is lost) and the compaction is retried',
    );
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.compactionQueued = true;
      void this.serial(() => this.runCompaction());
    }, delay);
    this.retryTimer.unref();
  }

  /** How compaction is doing, for `/health` and the failure counter. */
  compaction(): CompactionStatus {
    return {
      state: this.consecutiveFailures > 0 ? 'failing' : 'ok',
      failures: this.failures,
      ...(this.lastFailureAt !== undefined ? { lastFailureAt: this.lastFailureAt } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      ...(this.consecutiveFailures > 0 && this.nextRetryAt !== undefined ? { nextRetryAt: this.nextRetryAt } : {}),
    };
  }

  /** Records a refused write (health, the gauge, the log) and returns the error the client gets. */
  private writeRefused(e: unknown, bytes: number): StoreUnavailableError {
    const code = errorCode(e);
    this.writeError = code;
    this.lastWriteError = code;
    this.writeFailures++;
    this.lastWriteFailureAt = this.clock.now();
    // The client learns what happened, not where: fs messages carry server paths (logged here).
    if (!NO_SPACE.has(code)) {
      this.opts.logger.error({ err: (e as Error).message, code, bytes }, 'content write to DATA_DIR failed; nothing was stored');
      return new StoreUnavailableError(`could not write to the content store (DATA_DIR): ${code}; nothing was stored`);
    }
    this.refusedBytes = bytes;
    this.opts.logger.error(
      { err: (e as Error).message, code, bytes, dir: this.opts.dir },
      'content write refused: DATA_DIR has no space left (nothing was stored; the log is cut back to its last whole record). Writes succeed again once space is freed, without a restart',
    );
    this.watchForSpace();
    return new StoreUnavailableError(
      `could not write to the content store (DATA_DIR): the disk is full (${code}); nothing was stored. Writes succeed again once space is freed; retrying is safe`,
    );
  }

  private writeSucceeded(): void {
    if (this.writeError === undefined) return;
    this.opts.logger.info({ previousError: this.writeError }, 'content writes to DATA_DIR succeed again');
    this.writeError = undefined;
    this.stopWatchingForSpace();
  }

  /** While writes are refused for a full disk: `ok` again once the refused write would fit. */
  private watchForSpace(): void {
    if (this.spaceTimer) return;
    const free = this.opts.freeBytes ?? statfsFreeBytes;
    this.spaceTimer = setInterval(() => {
      free(this.opts.dir).then(
        (bytes) => {
          if (!this.spaceTimer || this.writeError === undefined || !NO_SPACE.has(this.writeError) || bytes < this.refusedBytes) return;
          this.opts.logger.info({ freeBytes: bytes, refusedBytes: this.refusedBytes }, 'DATA_DIR has space again for the refused content write');
          this.writeError = undefined;
          this.stopWatchingForSpace();
        },
        () => undefined,
      );
    }, this.opts.spaceCheckMs ?? SPACE_CHECK_MS);
    this.spaceTimer.unref();
  }

  private stopWatchingForSpace(): void {
    clearInterval(this.spaceTimer);
    this.spaceTimer = undefined;
  }

  /** Whether writes go through now, for `/health` and the write-state gauge. */
  writes(): WriteStatus {
    const state = this.broken ? 'read_only' : this.writeError === undefined ? 'ok' : NO_SPACE.has(this.writeError) ? 'disk_full' : 'failing';
    return {
      state,
      failures: this.writeFailures,
      ...(this.lastWriteFailureAt !== undefined ? { lastFailureAt: this.lastWriteFailureAt } : {}),
      ...(this.lastWriteError !== undefined ? { lastError: this.lastWriteError } : {}),
    };
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

  /**
   * Writes generation g+1 (snapshot of everything, empty log), switches writes to it, then drops
   * every older generation: damaged files (`keepDamaged`) are renamed to `<file>.damaged`, the
   * rest deleted. Throws on failure, in three stages:
   * - before the switch (writing or renaming the snapshot): generation g stays in use; the new
   *   files are removed (a leftover `.tmp` is removed at the next start anyway);
   * - at the switch (creating the new log, syncing the folder): the new snapshot is removed again,
   *   because writes that go on into log g must not be shadowed at the next start by a snapshot
   *   that is older than them. If it cannot be removed, writes are refused (503, nothing stored)
   *   until restart, which loads both generations and keeps everything acknowledged;
   * - after the switch (renaming damaged files, deleting old ones; `cleanUp`): generation g+1
   *   is in use; older files left behind are merged at the next start (oldest first, newer
   *   content wins), and the retry only finishes the clean-up (no new generation).
   */
  private async compact(): Promise<void> {
    const next = this.gen + 1;
    const snapshot = this.path(next, 'snapshot');
    const tmp = `${snapshot}.tmp`;
    const all = [...this.allItems().values()];
    let bytes = 0;
    try {
      const fh = await open(tmp, 'w');
      try {
        for (let i = 0; i < all.length; i += SNAPSHOT_CHUNK) {
          const step = stepper();
          const rec = await encodeRecordInSteps({ op: 'snapshot', ...(await itemsRecord(all.slice(i, i + SNAPSHOT_CHUNK), step)) } satisfies SnapshotRecord, step);
          await writeAll(fh, rec);
          bytes += rec.length;
        }
        const end = encodeRecord({ op: 'end', count: all.length } satisfies EndRecord);
        await writeAll(fh, end);
        bytes += end.length;
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, snapshot);
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw e;
    }
    let newLog: FileHandle | undefined;
    try {
      newLog = await open(this.path(next, 'log'), 'a');
      await this.syncDir();
    } catch (e) {
      await newLog?.close().catch(() => undefined);
      await this.dropGeneration(next, newLog !== undefined, e as Error);
      throw e;
    }
    const oldLog = this.log;
    this.log = newLog;
    this.gen = next;
    this.logBytes = 0;
    this.snapshotBytes = bytes;
    this.rewriteWanted = false;
    await oldLog?.close().catch(() => undefined);
    await this.cleanUp();
    this.opts.logger.info({ generation: next, items: all.length, bytes }, 'content store compacted');
    this.saveCatalogue();
  }

  /**
   * Drops every generation older than the current one: damaged files (`keepDamaged`) are renamed
   * to `<file>.damaged`, the rest deleted. A damaged file whose rename fails is kept as it is
   * (never deleted) for the next attempt; the other files go regardless. Throws the first failure.
   */
  private async cleanUp(): Promise<void> {
    let failed: unknown;
    const still: string[] = [];
    for (const file of this.keepDamaged) {
      try {
        await rename(file, `${file}.damaged`);
      } catch (e) {
        failed ??= e;
        still.push(file);
      }
    }
    this.keepDamaged = still;
    try {
      for (const n of await readdir(this.opts.dir)) {
        const m = NAME.exec(n);
        const file = join(this.opts.dir, n);
        if (m && Number(m[1]) < this.gen && !still.includes(file)) await rm(file, { force: true });
      }
      await this.syncDir();
    } catch (e) {
      failed ??= e;
    }
    this.cleanupWanted = failed !== undefined;
    if (failed !== undefined) throw failed;
  }

  /**
   * Removes generation `gen` (its snapshot, and its log when this attempt created it) after a
   * failed switch to it; refuses writes when it cannot.
   */
  private async dropGeneration(gen: number, createdLog: boolean, cause: Error): Promise<void> {
    try {
      await rm(this.path(gen, 'snapshot'), { force: true });
      if (createdLog) await rm(this.path(gen, 'log'), { force: true });
      await this.syncDir();
    } catch (e) {
      this.broken = cause;
      this.opts.logger.error(
        { err: e, cause: cause.message, file: this.path(gen, 'snapshot') },
        'content store could not remove a half-made generation after a failed compaction; refusing writes until restart (a restart loads every generation and loses nothing acknowledged)',
      );
    }
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
    const all = this.allItems();
    return ids.map((id) => all.get(id)).filter((i): i is Item => i !== undefined);
  }

  /** A file store has no other writers. */
  onRemoteChange(): void {}

  async close(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.stopWatchingForSpace();
    this.closing = true;
    await this.catalogueJob;
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
