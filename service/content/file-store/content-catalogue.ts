import { crc32 } from 'node:zlib';
import { CRC_STEP_BYTES, crcInSteps, decodeHead, encodeHead, pad8, pushPadded } from '../../lib/framed-file';
import { atOnce, type Stepwise } from '../../lib/yield-to-loop';
import { itemFingerprint } from '../item-fingerprint';
import { ITEM_TYPES, compareNewestFirst, type Item, type ItemType, type SortKeys } from '../item';
import { OLD_FORM, PLAIN_ABSENT, PLAIN_IS_BODY, listingFields, type ListingKeys } from '../lazy-item';
import { pausedSort } from './paused-sort';
import { PLAIN_TEXT_VERSION } from '../plain-text';
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  NEWLINE,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  SPACE,
} from '../../lib/char-codes';

/**
 * The file store's catalogue (`content.catalogue`): for every item of one generation, in the
 * store's order, its id, type and fingerprint and where its record is in the generation's files
 * (which file, the byte range of its JSON object and of its stored plain text). A start that finds
 * it matching the files (names, lengths, a CRC-32 of every byte it covers) makes each item a lazy
 * one (lazy-item.ts) instead of parsing every record, and replays only the log written after it.
 * It is derived data: anything wrong with it (damage, another generation, another version of the
 * fingerprint or the plain text) and the start parses the files as before, then writes a new one.
 *
 * Since version 2 it also holds what a listing reads (`ListingKeys`): each item's dates and tags
 * and its place in the listing of every item (by type, then newest first), so the first listing
 * after a start neither parses nor sorts the items, and a tag filter reads no record. A catalogue
 * of version 1 (without them) is still used: its items are lazy as before (a listing parses them),
 * and the start writes one of version 2 in the background.
 */

const keyOf = (version: number) => `content-catalogue/${version};plain=${PLAIN_TEXT_VERSION};fingerprint=2`;
/** What a catalogue is made with; one made otherwise is not used, but for `OLD_CATALOGUE_KEY`. */
export const CATALOGUE_KEY = keyOf(2);
/** A catalogue of the older shape (no listing keys), still used. */
export const OLD_CATALOGUE_KEY = keyOf(1);

const MAGIC = Buffer.from('SVCCATL1', 'ascii');

/** Why a catalogue was not used. */
export class CatalogueError extends Error {}

/** A content file a catalogue covers: its name in the folder, the bytes covered, their CRC-32. */
export interface CoveredFile {
  readonly name: string;
  readonly bytes: number;
  readonly crc: number;
}

/** A catalogue, decoded and checked in itself (not yet against the files). */
export interface Catalogue {
  readonly files: readonly CoveredFile[];
  readonly ids: readonly string[];
  readonly types: Uint8Array;
  readonly file: Uint8Array;
  readonly start: Uint32Array;
  readonly end: Uint32Array;
  readonly plainStart: Int32Array;
  readonly plainEnd: Uint32Array;
  readonly fingerprint: Uint32Array;
  /** What listings read (undefined in a catalogue of version 1). */
  readonly listing: ListingKeys | undefined;
}

interface Header {
  key: string;
  count: number;
  idsBytes: number;
  bodyBytes: number;
  bodyCrc: number;
  files: CoveredFile[];
  /** Version 2: bytes of the dates, of the tag names (a JSON array), and how many tags the items hold. */
  datesBytes?: number;
  tagNamesBytes?: number;
  tagCount?: number;
}

/** Ids `catalogueParts` makes bytes of in one step (joined and encoded: ~1 ms for 4,096 ids of ~20 bytes). */
const IDS_PER_STEP = 4096;

/**
 * The bytes of `c` (a catalogue of `c.ids.length` items; of version 1 when it has no listing
 * keys: tests of the upgrade) as parts to write in order, a step at a time: the ids a chunk of
 * `IDS_PER_STEP` a step, the body's CRC-32 `CRC_STEP_BYTES` a step. Made in one step (the ids
 * joined into one string, the parts concatenated), a catalogue of 100,000 items took 30-36 ms of
 * the loop thread's CPU, and was the longest turn of a `delete_where` beside which the catalogue
 * writer ran (issue 39; the step after `open` of the temp file, so no pause marked it).
 */
export function* catalogueParts(c: Catalogue): Stepwise<Buffer[]> {
  const n = c.ids.length;
  const parts: Buffer[] = [];
  let idsBytes = 0;
  for (let a = 0; a < n; a += IDS_PER_STEP) {
    const b = Math.min(n, a + IDS_PER_STEP);
    // One line an id, no line break after the last (decodeCatalogue splits on them).
    const chunk = Buffer.from(c.ids.slice(a, b).join('\n') + (b < n ? '\n' : ''), 'utf8');
    parts.push(chunk);
    idsBytes += chunk.length;
    yield;
  }
  let bodyBytes = pad8(idsBytes);
  if (bodyBytes > idsBytes) parts.push(Buffer.alloc(bodyBytes - idsBytes));
  const add = (b: ArrayBufferView) => {
    bodyBytes += pushPadded(parts, Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  };
  for (const a of [c.types, c.file, c.start, c.end, c.plainStart, c.plainEnd, c.fingerprint]) add(a);
  const l = c.listing;
  const tagNames = l ? Buffer.from(JSON.stringify(l.tagNames), 'utf8') : undefined;
  if (l && tagNames) for (const a of [l.dates, l.dateAt, tagNames, l.tagAt, l.tagIds, l.rank]) add(a);
  let crc = 0;
  // Empty parts skipped: zlib.crc32 of an empty view of an empty ArrayBuffer answers 0, not the running value.
  for (const p of parts)
    for (let at = 0; at < p.length; at += CRC_STEP_BYTES) {
      crc = crc32(p.subarray(at, Math.min(p.length, at + CRC_STEP_BYTES)), crc);
      yield;
    }
  const header: Header = {
    key: l ? CATALOGUE_KEY : OLD_CATALOGUE_KEY,
    count: n,
    idsBytes,
    bodyBytes,
    bodyCrc: crc,
    files: [...c.files],
  };
  if (l && tagNames)
    Object.assign(header, { datesBytes: l.dates.length, tagNamesBytes: tagNames.length, tagCount: l.tagIds.length });
  return [encodeHead(MAGIC, header), ...parts];
}

/** Encodes `c` at once (`catalogueParts` in one step, concatenated): tests, small catalogues. */
export function encodeCatalogue(c: Catalogue): Buffer {
  return Buffer.concat(atOnce(catalogueParts(c)));
}

/** A typed array over `buf[at, at + count * size)`, copied when `buf` is not aligned for it. */
function view<T>(
  buf: Buffer,
  at: number,
  count: number,
  size: number,
  make: (b: ArrayBuffer, o: number, n: number) => T,
): T {
  const o = buf.byteOffset + at;
  if (o % size === 0) return make(buf.buffer as ArrayBuffer, o, count);
  const copy = new Uint8Array(count * size);
  copy.set(buf.subarray(at, at + count * size));
  return make(copy.buffer, 0, count);
}

/** Decodes and checks a catalogue (magic, key, CRC-32 of the header and of the body, exact length). */
export function decodeCatalogue(buf: Buffer): Catalogue {
  const head = decodeHead(buf, MAGIC, 'content catalogue', (reason) => new CatalogueError(reason));
  const h = head.header as Header;
  if (h.key !== CATALOGUE_KEY && h.key !== OLD_CATALOGUE_KEY)
    throw new CatalogueError(`made by another version (${String(h.key)})`);
  const n = h.count;
  const bodyAt = head.bodyStart;
  if (!Number.isInteger(n) || n < 0 || buf.length !== bodyAt + h.bodyBytes) throw new CatalogueError('length mismatch');
  if (crc32(buf.subarray(bodyAt)) !== h.bodyCrc) throw new CatalogueError('body checksum mismatch');
  let at = bodyAt;
  const ids = n === 0 ? [] : buf.toString('utf8', at, at + h.idsBytes).split('\n');
  at += pad8(h.idsBytes);
  const u8 = () => {
    const v = buf.subarray(at, at + n);
    at += pad8(n);
    return new Uint8Array(v.buffer, v.byteOffset, n);
  };
  const types = u8();
  const file = u8();
  const u32 = <T>(make: (b: ArrayBuffer, o: number, k: number) => T, count = n): T => {
    if (at + count * 4 > buf.length) throw new CatalogueError('sections do not match the item count');
    const v = view(buf, at, count, 4, make);
    at += pad8(count * 4);
    return v;
  };
  const u32s = (count = n) => u32((b, o, k) => new Uint32Array(b, o, k), count);
  const start = u32s();
  const end = u32s();
  const plainStart = u32((b, o, k) => new Int32Array(b, o, k));
  const plainEnd = u32s();
  const fingerprint = u32s();
  const listing =
    h.key === CATALOGUE_KEY
      ? decodeListing(
          buf,
          n,
          h,
          () => at,
          (b) => (at = b),
          u32s,
        )
      : undefined;
  if (ids.length !== n || at !== buf.length || !Array.isArray(h.files))
    throw new CatalogueError('sections do not match the item count');
  for (let i = 0; i < n; i++)
    if (types[i] >= ITEM_TYPES.length || file[i] >= h.files.length) throw new CatalogueError('entry out of range');
  return { files: h.files, ids, types, file, start, end, plainStart, plainEnd, fingerprint, listing };
}

/** The listing keys of a catalogue of version 2 (`at` reads and `moveTo` sets the position in `buf`), checked. */
function decodeListing(
  buf: Buffer,
  n: number,
  h: Header,
  at: () => number,
  moveTo: (p: number) => void,
  u32s: (count?: number) => Uint32Array,
): ListingKeys {
  const { datesBytes, tagNamesBytes, tagCount } = h;
  if (![datesBytes, tagNamesBytes, tagCount].every((v) => Number.isInteger(v) && v! >= 0))
    throw new CatalogueError('listing sections missing from the header');
  if (at() + datesBytes! > buf.length) throw new CatalogueError('sections do not match the item count');
  const dates = buf.subarray(at(), at() + datesBytes!);
  moveTo(at() + pad8(datesBytes!));
  const dateAt = u32s(n + 1);
  if (at() + tagNamesBytes! > buf.length) throw new CatalogueError('sections do not match the item count');
  let tagNames: unknown;
  try {
    tagNames = JSON.parse(buf.toString('utf8', at(), at() + tagNamesBytes!));
  } catch {
    throw new CatalogueError('tag names are not JSON');
  }
  moveTo(at() + pad8(tagNamesBytes!));
  const tagAt = u32s(n + 1);
  const tagIds = u32s(tagCount);
  const rank = u32s();
  if (!Array.isArray(tagNames) || !tagNames.every((t) => typeof t === 'string'))
    throw new CatalogueError('tag names are not strings');
  const names = tagNames as string[];
  if (dateAt[0] !== 0 || dateAt[n] !== datesBytes || tagAt[0] !== 0 || tagAt[n] !== tagCount)
    throw new CatalogueError('listing sections out of range');
  for (let i = 0; i < n; i++) {
    if (dateAt[i] > dateAt[i + 1] || tagAt[i] > tagAt[i + 1] || rank[i] >= n)
      throw new CatalogueError('listing entry out of range');
  }
  for (let k = 0; k < tagCount!; k++)
    if (tagIds[k] >= names.length) throw new CatalogueError('listing entry out of range');
  return { dates, dateAt, tagNames: names, tagAt, tagIds, rank };
}

/** The type of a catalogue entry. */
export function typeOf(code: number): ItemType {
  return ITEM_TYPES[code];
}

/** End (exclusive) of the JSON string starting at `p` (a `"`). */
function skipString(buf: Buffer, p: number): number {
  let q = p + 1;
  for (;;) {
    q = buf.indexOf(QUOTE, q);
    if (q < 0) throw new CatalogueError('unterminated string');
    let k = q - 1;
    while (buf[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    q++;
  }
}

/** End (exclusive) of the JSON value starting at `p` (JSON.stringify's output: no whitespace). */
function skipValue(buf: Buffer, p: number): number {
  const c = buf[p];
  if (c === QUOTE) return skipString(buf, p);
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    let depth = 0;
    for (let q = p; q < buf.length;) {
      const b = buf[q];
      if (b === QUOTE) {
        q = skipString(buf, q);
        continue;
      }
      if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
      else if ((b === CLOSE_OBJECT || b === CLOSE_ARRAY) && --depth === 0) return q + 1;
      q++;
    }
    throw new CatalogueError('unterminated value');
  }
  let q = p;
  while (q < buf.length && buf[q] !== COMMA && buf[q] !== CLOSE_OBJECT && buf[q] !== CLOSE_ARRAY) q++;
  return q;
}

/** Byte ranges of the elements of the array at `p` (a `[`), and where it ends. */
function arrayElements(buf: Buffer, p: number): { ranges: number[]; end: number } {
  const ranges: number[] = [];
  let q = p + 1;
  if (buf[q] === CLOSE_ARRAY) return { ranges, end: q + 1 };
  for (;;) {
    const e = skipValue(buf, q);
    ranges.push(q, e);
    if (buf[e] === CLOSE_ARRAY) return { ranges, end: e + 1 };
    if (buf[e] !== COMMA) throw new CatalogueError('malformed array');
    q = e + 1;
  }
}

/** What a record holds, with byte ranges in its file. */
interface ScannedRecord {
  op: string;
  items?: number[];
  plain?: number[];
  version?: number;
  count?: number;
  /** A put record's deleted ids. */
  removed?: unknown;
}

/** The top-level keys of the record JSON `buf[p, end)` (an object), with the ranges of `items` and `plain`. */
function scanRecord(buf: Buffer, p: number, end: number): ScannedRecord {
  const r: ScannedRecord = { op: '' };
  if (buf[p] !== OPEN_OBJECT) throw new CatalogueError('record is not an object');
  let q = p + 1;
  while (q < end && buf[q] !== CLOSE_OBJECT) {
    const keyEnd = skipString(buf, q);
    const key = buf.toString('utf8', q + 1, keyEnd - 1);
    if (buf[keyEnd] !== COLON) throw new CatalogueError('malformed record');
    const v = keyEnd + 1;
    let e: number;
    if ((key === 'items' || key === 'plain') && buf[v] === OPEN_ARRAY) {
      const a = arrayElements(buf, v);
      r[key] = a.ranges;
      e = a.end;
    } else {
      e = skipValue(buf, v);
      const raw = buf.toString('utf8', v, e);
      if (key === 'op') r.op = JSON.parse(raw) as string;
      else if (key === 'plain_text_version') r.version = Number(raw);
      else if (key === 'count') r.count = Number(raw);
      else if (key === 'removed') r.removed = JSON.parse(raw);
    }
    q = buf[e] === COMMA ? e + 1 : e;
  }
  return r;
}

const ID_HEAD = Buffer.from('{"id":"', 'ascii');

/** The id of the item JSON `buf[s, e)`. */
function idAt(buf: Buffer, s: number, e: number): string {
  if (buf.compare(ID_HEAD, 0, ID_HEAD.length, s, s + ID_HEAD.length) === 0) {
    const q = buf.indexOf(QUOTE, s + ID_HEAD.length);
    if (q > 0 && q < e && buf[q - 1] !== BACKSLASH) return buf.toString('utf8', s + ID_HEAD.length, q);
  }
  return (JSON.parse(buf.toString('utf8', s, e)) as Item).id;
}

/** A content file's bytes for `buildCatalogue`: the whole snapshot, or a log up to the last acknowledged write. */
export interface CatalogueSource {
  readonly name: string;
  readonly buf: Buffer;
  readonly snapshot: boolean;
}

/**
 * The catalogue of `items` (the store's items, in its order) from the files they were loaded from,
 * or undefined when the files do not hold exactly them intact (then no catalogue is written).
 * Yields to the event loop through `pause` between records once `STEP_BYTES` were read since the
 * last pause (a put record of a 1,000-item batch is a few hundred KB: counting records only, a
 * 200k-item log of such records was read in one step of ~250 ms), and between steps of a file's CRC-32.
 */
/** Bytes of records `buildCatalogue` reads (checksums, scans) between two pauses. */
const STEP_BYTES = 256 << 10;

export async function buildCatalogue(
  items: readonly Item[],
  sources: readonly CatalogueSource[],
  pause: () => Promise<void>,
): Promise<Catalogue | undefined> {
  const at = new Map<string, number>();
  const loc: number[] = [];
  const files: CoveredFile[] = [];
  for (let f = 0; f < sources.length; f++) {
    const { buf, snapshot, name } = sources[f];
    if (buf.length > 0xffff_ffff) return undefined;
    let snapshotItems = 0;
    let ended = false;
    let p = 0;
    let paused = 0;
    while (p < buf.length) {
      if (p - paused >= STEP_BYTES) {
        await pause();
        paused = p;
      }
      const sp = buf.indexOf(SPACE, p);
      if (sp < 0 || sp - p > 12) return undefined;
      const len = Number(buf.toString('ascii', p, sp));
      const js = sp + 10;
      const je = js + len;
      if (!Number.isInteger(len) || je >= buf.length || buf[je] !== NEWLINE) return undefined;
      if (crc32(buf.subarray(js, je)).toString(16).padStart(8, '0') !== buf.toString('ascii', sp + 1, sp + 9))
        return undefined;
      const r = scanRecord(buf, js, je);
      if ((snapshot && r.op === 'snapshot') || (!snapshot && r.op === 'put')) {
        if (!r.items) return undefined;
        // A write's deletes, then its items (disjoint): a deleted id is not catalogued.
        if (!snapshot && Array.isArray(r.removed))
          for (const id of r.removed) if (typeof id === 'string') at.delete(id);
        const n = r.items.length / 2;
        const form =
          r.plain === undefined || r.plain.length !== r.items.length
            ? OLD_FORM
            : r.version === PLAIN_TEXT_VERSION
              ? 0
              : PLAIN_ABSENT;
        for (let k = 0; k < n; k++) {
          const s = r.items[2 * k];
          const e = r.items[2 * k + 1];
          let ps = form;
          let pe = 0;
          if (form === 0) {
            ps = r.plain![2 * k];
            pe = r.plain![2 * k + 1];
            if (buf[ps] !== QUOTE) ps = PLAIN_IS_BODY;
          }
          const id = idAt(buf, s, e);
          let slot = at.get(id);
          if (slot === undefined) {
            slot = loc.length;
            at.set(id, slot);
            loc.push(0, 0, 0, 0, 0);
          }
          loc[slot] = f;
          loc[slot + 1] = s;
          loc[slot + 2] = e;
          loc[slot + 3] = ps;
          loc[slot + 4] = pe;
        }
        if (snapshot) snapshotItems += n;
      } else if (snapshot && r.op === 'end') ended = r.count === snapshotItems;
      p = je + 1;
    }
    if (snapshot && !ended) return undefined;
    files.push({ name, bytes: buf.length, crc: await crcInSteps([buf], pause) });
  }
  const n = items.length;
  if (at.size !== n) return undefined;
  const listing = await listingKeys(items, pause);
  if (!listing) return undefined;
  const c = {
    listing,
    files,
    ids: new Array<string>(n),
    types: new Uint8Array(n),
    file: new Uint8Array(n),
    start: new Uint32Array(n),
    end: new Uint32Array(n),
    plainStart: new Int32Array(n),
    plainEnd: new Uint32Array(n),
    fingerprint: new Uint32Array(n),
  };
  for (let i = 0; i < n; i++) {
    if ((i & 1023) === 1023) await pause();
    const item = items[i];
    const slot = at.get(item.id);
    const type = ITEM_TYPES.indexOf(item.type);
    if (slot === undefined || type < 0 || item.id.includes('\n')) return undefined;
    c.ids[i] = item.id;
    c.types[i] = type;
    c.file[i] = loc[slot];
    c.start[i] = loc[slot + 1];
    c.end[i] = loc[slot + 2];
    c.plainStart[i] = loc[slot + 3];
    c.plainEnd[i] = loc[slot + 4];
    c.fingerprint[i] = itemFingerprint(item);
  }
  return c;
}

/** Lines of dates (~60 bytes each) `listingKeys` encodes between two pauses. */
const DATES_PER_STEP = 8192;

/**
 * The listing keys of `items` (`ListingKeys`), or undefined when a date holds a line break (not
 * one that validation lets in; then no catalogue is written). The ranks are sorted with pauses.
 */
async function listingKeys(items: readonly Item[], pause: () => Promise<void>): Promise<ListingKeys | undefined> {
  const n = items.length;
  const keys = new Array<SortKeys>(n);
  const type = new Uint8Array(n);
  const dateParts: string[] = [];
  const dateAt = new Uint32Array(n + 1);
  const tagAt = new Uint32Array(n + 1);
  const tagIds: number[] = [];
  const tagNumber = new Map<string, number>();
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    if ((i & 1023) === 1023) await pause();
    const f = listingFields(items[i]);
    const line = `${f.date ?? ''}\n${f.created_at}\n${f.updated_at}`;
    if (line.split('\n').length !== 3) return undefined;
    dateParts.push(line);
    bytes += Buffer.byteLength(line, 'utf8');
    dateAt[i + 1] = bytes;
    for (const t of f.tags) {
      let k = tagNumber.get(t);
      if (k === undefined) tagNumber.set(t, (k = tagNumber.size));
      tagIds.push(k);
    }
    tagAt[i + 1] = tagIds.length;
    keys[i] = { id: items[i].id, date: f.date, created_at: f.created_at, updated_at: f.updated_at };
    type[i] = ITEM_TYPES.indexOf(items[i].type);
  }
  // The listing of every item: by type in listing order, then newest first.
  const order = await pausedSort(n, (a, b) => type[a] - type[b] || compareNewestFirst(keys[a], keys[b]), pause);
  const rank = new Uint32Array(n);
  for (let r = 0; r < n; r++) rank[order[r]] = r;
  await pause();
  // The dates' bytes a block of lines a step: joined and encoded in one step, with the loop after
  // it in buildCatalogue, 100,000 items' took 30-66 ms of the loop thread's CPU (issue 39).
  const dates = Buffer.alloc(bytes);
  for (let a = 0; a < n; a += DATES_PER_STEP) {
    const b = Math.min(n, a + DATES_PER_STEP);
    dates.write(dateParts.slice(a, b).join(''), dateAt[a], 'utf8');
    await pause();
  }
  return {
    dates,
    dateAt,
    tagNames: [...tagNumber.keys()],
    tagAt,
    tagIds: Uint32Array.from(tagIds),
    rank,
  };
}
