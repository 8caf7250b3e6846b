import { open, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { readWholeFile } from '../../lib/read-whole-file';
import type { Item } from '../item';
import { lazyItem, packItem } from '../lazy-item';
import { CatalogueError, decodeCatalogue, typeOf, type Catalogue } from './content-catalogue';
import { CATALOGUE_FILE, GENERATION_FILE } from './generation-files';
import { isEndRecord, isPutRecord, isSnapshotRecord, recordItems, removedIds } from './log-records';
import { decodeRecords, type ByteRange } from './record-log';
import type { FileStoreState } from './store-state';

/** What `replayFolder` found, for the store to finish opening with. */
export interface Replay {
  /** The generations present, oldest first. */
  readonly gens: readonly number[];
  /** How much of the log the catalogue covered; undefined when the files were parsed. */
  readonly covered: number | undefined;
  /** The current generation (past the first) has no snapshot. */
  readonly missing: boolean;
  /** Files with damaged records: kept as `<file>.damaged` once a new generation is in use. */
  readonly damagedFiles: string[];
  /** The catalogue used is of the older shape (content-catalogue.ts): a new one is wanted. */
  readonly catalogueUpgrade: boolean;
}

/** Damaged ranges plus the torn tail, for a file that should have neither. */
function tornToo(damaged: readonly ByteRange[], keepBytes: number, length: number): ByteRange[] {
  return keepBytes < length ? [...damaged, { start: keepBytes, end: length }] : [...damaged];
}

/**
 * Loads the folder's files into `s` and opens the current generation's log for appending:
 * leftover `.tmp` files are removed, every generation present is replayed (from the catalogue
 * where it matches), a torn tail is cut off the current log, and what was damaged or missing is
 * logged and returned.
 */
export async function replayFolder(s: FileStoreState): Promise<Replay> {
  const names = await readdir(s.dir);
  for (const n of names) if (n.endsWith('.tmp')) await rm(join(s.dir, n), { force: true });
  const files = new Map<number, { snapshot: boolean; log: boolean }>();
  for (const n of names) {
    const m = GENERATION_FILE.exec(n);
    if (!m) continue;
    const f = files.get(Number(m[1])) ?? { snapshot: false, log: false };
    f[m[2] as 'snapshot' | 'log'] = true;
    files.set(Number(m[1]), f);
  }
  const gens = [...files.keys()].sort((a, b) => a - b);
  s.gen = gens[gens.length - 1] ?? 0;
  s.items.clear();
  s.base = undefined;
  s.baseRemoved.clear();
  s.lossy = false;
  s.snapshotBytes = 0;
  s.logBytes = 0;
  // Every generation present is replayed, oldest first, newer content winning and deletes
  // applied. Normally that is one generation; more are left by a crash mid-compaction or put back
  // by an operator (a restored snapshot). A whole snapshot replaces what older generations held
  // (it holds all of it but the items deleted before it: readSnapshot); a damaged or missing one
  // is merged with them, so what it lost is loaded from them.
  const damagedFiles: string[] = [];
  // Every file is read at once (one read request each, off the event loop) and parsed in
  // order: a log is read while the snapshot before it is parsed.
  const reads = new Map<string, Promise<Buffer>>();
  const catalogueRead = readWholeFile(join(s.dir, CATALOGUE_FILE));
  catalogueRead.catch(() => undefined);
  for (const g of gens) {
    for (const kind of ['snapshot', 'log'] as const) {
      if (!files.get(g)?.[kind]) continue;
      const read = readWholeFile(s.path(g, kind));
      read.catch(() => undefined);
      reads.set(s.path(g, kind), read);
    }
  }
  // One generation (the normal case) with a catalogue that matches its files: items are made
  // from the catalogue, parsed at first use, and only the log after it is replayed.
  const fromCat =
    gens.length === 1 ? await fromCatalogue(s, gens[0], files.get(gens[0])!, reads, catalogueRead) : undefined;
  const covered = fromCat?.covered;
  for (const g of gens) {
    if (covered === undefined && files.get(g)?.snapshot && !(await readSnapshot(s, g, reads)))
      damagedFiles.push(s.path(g, 'snapshot'));
    if (files.get(g)?.log && !(await replayLog(s, g, reads, covered ?? 0))) damagedFiles.push(s.path(g, 'log'));
  }
  const missing = s.gen > 0 && !files.get(s.gen)?.snapshot;
  if (missing || damagedFiles.length) s.lossy = true;
  if (missing) {
    const file = s.path(s.gen, 'snapshot');
    s.logger.error(
      { file, items: s.items.size, loadedFrom: gens.map((g) => `content-${g}.*`) },
      `content snapshot ${file} is missing: started from the other content files (${s.items.size} items); items that only that snapshot held are not loaded. To get them back, put that file (or a backup of it) into DATA_DIR under the same name and restart: older generations are merged in, newer content wins`,
    );
  }
  s.log = await open(s.path(s.gen, 'log'), 'a');
  await s.syncDir();
  return { gens, covered, missing, damagedFiles, catalogueUpgrade: fromCat?.upgrade ?? false };
}

/**
 * Fills the items from the catalogue when it matches generation `gen`'s files (every byte it
 * covers, by CRC-32); resolves with how much of the log it covers (the rest is replayed) and
 * whether it is of the older shape, or undefined (none, or not usable: logged) when the files
 * must be parsed.
 */
async function fromCatalogue(
  s: FileStoreState,
  gen: number,
  present: { snapshot: boolean; log: boolean },
  reads: ReadonlyMap<string, Promise<Buffer>>,
  read: Promise<Buffer>,
): Promise<{ readonly covered: number; readonly upgrade: boolean } | undefined> {
  const file = join(s.dir, CATALOGUE_FILE);
  let cat: Catalogue;
  try {
    cat = decodeCatalogue(await read);
  } catch (e) {
    if (e instanceof CatalogueError)
      s.logger.warn(
        { file, reason: e.message },
        `content catalogue not used (${e.message}): parsing the content files; a new one is written after the start`,
      );
    else if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      s.logger.warn({ file, err: (e as Error).message }, 'content catalogue unreadable: parsing the content files');
    return undefined;
  }
  const names = [
    ...(present.snapshot ? [`content-${gen}.snapshot`] : []),
    ...(present.log ? [`content-${gen}.log`] : []),
  ];
  const mismatch = (reason: string) => {
    s.logger.warn(
      { file, reason },
      `content catalogue not used (${reason}): parsing the content files; a new one is written after the start`,
    );
    return undefined;
  };
  if (cat.files.length !== names.length || cat.files.some((f, i) => f.name !== names[i])) {
    // Normal after a compaction that was not followed by a catalogue yet (a stop right after it).
    s.logger.info(
      { file, files: names },
      'content catalogue is of another generation: parsing the content files; a new one is written after the start',
    );
    return undefined;
  }
  const sources: Buffer[] = [];
  for (const f of cat.files) {
    const buf = await reads.get(join(s.dir, f.name))!;
    const snapshot = f.name.endsWith('.snapshot');
    if (buf.length < f.bytes || (snapshot && buf.length !== f.bytes))
      return mismatch(`${f.name} is shorter or longer than it covers`);
    if (crc32(buf.subarray(0, f.bytes)) !== f.crc) return mismatch(`${f.name} changed since it was made`);
    sources.push(buf);
    if (snapshot) {
      s.snapshotBytes = buf.length;
      s.lossy = lastRecordLossy(buf);
    }
  }
  const { ids, types, fingerprint, start, end, plainStart, plainEnd, listing } = cat;
  const base = new Array<Item>(ids.length);
  for (let i = 0; i < ids.length; i++) {
    base[i] = lazyItem(
      ids[i],
      typeOf(types[i]),
      fingerprint[i],
      sources[cat.file[i]],
      start[i],
      end[i],
      plainStart[i],
      plainEnd[i],
      listing,
      i,
    );
  }
  s.base = base;
  let upgrade = false;
  if (!listing) {
    // A catalogue of the older shape: used, and replaced after the start by one with listing keys.
    s.logger.info(
      { file },
      'content catalogue has no listing keys (older version): used, and a new one is written after the start',
    );
    upgrade = true;
  }
  return { covered: cat.files.find((f) => f.name.endsWith('.log'))?.bytes ?? 0, upgrade };
}

/** Whether the last record of a snapshot (its end record) says it is lossy (`EndRecord`). */
function lastRecordLossy(buf: Buffer): boolean {
  const from = buf.lastIndexOf(0x0a, buf.length - 2) + 1;
  const [end] = decodeRecords(buf.subarray(from)).records;
  return isEndRecord(end) && end.lossy === true;
}

/** Loads the readable part of snapshot `gen`; false when the file is damaged. */
async function readSnapshot(
  s: FileStoreState,
  gen: number,
  reads: ReadonlyMap<string, Promise<Buffer>>,
): Promise<boolean> {
  const file = s.path(gen, 'snapshot');
  const buf = await reads.get(file)!;
  const { records, damaged, torn, keepBytes } = decodeRecords(buf);
  let count = 0;
  let expected: number | undefined;
  let lossy = false;
  const held = new Map<string, Item>();
  for (const r of records) {
    if (isSnapshotRecord(r)) {
      for (const i of recordItems(r)) held.set(i.id, packItem(i));
      count += r.items.length;
    } else if (isEndRecord(r)) {
      expected = r.count;
      lossy = r.lossy === true;
    }
  }
  if (gen === s.gen) s.snapshotBytes = buf.length;
  // A snapshot is renamed into place only once complete and fsynced: damage here is
  // corruption, not a crash.
  const whole = !damaged.length && !torn && expected === count;
  if (whole && lossy) {
    // Written while items were missing: merged with older files (what an operator put back),
    // and still lossy when there were none.
    s.lossy = s.items.size === 0;
    for (const [id, i] of held) s.items.set(id, i);
    return true;
  }
  if (whole) {
    // Whole, it holds everything older generations held but what was deleted before it: it
    // replaces them (merged, a deleted item would come back).
    s.lossy = false;
    if (s.items.size) {
      const dropped = [...s.items.keys()].filter((id) => !held.has(id)).length;
      if (dropped)
        s.logger.warn(
          { file, olderGenerationItems: s.items.size, notInSnapshot: dropped },
          `content snapshot ${file} is whole: ${dropped} items of older generations that it does not hold (deleted before it was written) are not loaded`,
        );
    }
    s.items = held;
    return true;
  }
  for (const [id, i] of held) s.items.set(id, i);
  const lost = expected === undefined ? 'an unknown number of' : String(Math.max(0, expected - count));
  s.logger.error(
    {
      file,
      loadedItems: count,
      expectedItems: expected ?? null,
      damagedRanges: tornToo(damaged, keepBytes, buf.length),
    },
    `content snapshot ${file} is damaged: loaded the ${count} items of its intact records and every log; ${lost} items in damaged records are not loaded. The file is kept as ${file}.damaged; to get those items back, put a backup of ${file} into DATA_DIR under that name and restart: older generations are merged in, newer content wins`,
  );
  return false;
}

/** Replays log `gen`; cuts a torn tail off the current log; false when the log is damaged. */
async function replayLog(
  s: FileStoreState,
  gen: number,
  reads: ReadonlyMap<string, Promise<Buffer>>,
  from = 0,
): Promise<boolean> {
  const file = s.path(gen, 'log');
  const buf = await reads.get(file)!;
  const tail = decodeRecords(buf.subarray(from));
  const { records, torn } = tail;
  const damaged = tail.damaged.map((r) => ({ start: r.start + from, end: r.end + from }));
  const keepBytes = tail.keepBytes + from;
  for (const r of records) {
    if (!isPutRecord(r)) continue;
    for (const id of removedIds(r)) s.remove(id);
    for (const i of recordItems(r)) s.put(i);
  }
  if (damaged.length) {
    s.logger.error(
      {
        file,
        damagedRanges: damaged,
        damagedBytes: damaged.reduce((n, r) => n + r.end - r.start, 0),
        keptRecords: records.length,
      },
      `content log ${file} is damaged: skipped ${damaged.length} damaged region(s) and loaded the ${records.length} intact records around them; writes in the damaged bytes are not loaded. The file is kept as ${file}.damaged`,
    );
  }
  if (torn) {
    s.logger.warn(
      { file, droppedBytes: buf.length - keepBytes, droppedRange: { start: keepBytes, end: buf.length } },
      'content log ends with an incomplete write (the process stopped mid-write); dropping that last batch',
    );
    // Only the tail after the last newline: every intact record stays, and the next append
    // starts on a fresh line.
    if (gen === s.gen) {
      const fh = await open(file, 'r+');
      try {
        await fh.truncate(keepBytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
  }
  if (gen === s.gen) s.logBytes = keepBytes;
  return damaged.length === 0;
}
