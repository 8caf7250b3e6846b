import { crcInSteps, decodeHead, encodeHead, pushPadded } from '../../lib/framed-file';
import type { IdReader, StoredSnapshot, VectorSnapshot } from './vector-index';
import { BACKSLASH, CLOSE_ARRAY, COMMA, NEWLINE, OPEN_ARRAY, QUOTE, SPACE } from '../../lib/char-codes';

/**
 * The on-disk form of a vector index's state (`VectorSnapshot`), in the layout of the search
 * segment (index/segment-file.ts, lib/framed-file.ts): the 8 bytes `SRCHVEC1`; the header's byte
 * length and CRC-32; the header, JSON; padding to 8; the body, one section per array at an offset
 * that is a multiple of 8, with its length and CRC-32 in the header. The header carries the
 * index's `key` (model, dimensions: what the vectors were made with; a file of another key is
 * refused), the `content` fingerprint of the items it holds (the caller refuses a file whose
 * content is not the live content's, as for the segment), and the graph file beside it that
 * matches it: its name, byte length, CRC-32 and the rows it holds (vector-store.ts). Anything
 * that does not add up is refused with the reason; nothing is trusted before both checksums pass.
 */

const MAGIC = Buffer.from('SRCHVEC1', 'latin1');
const FORMAT = 1;

type SectionType = 'i32' | 'u32' | 'f32' | 'json';

interface Section {
  readonly name: string;
  readonly type: SectionType;
  readonly offset: number;
  readonly bytes: number;
}

/** The graph file that goes with a vector file. */
export interface GraphRef {
  /** File name, in the same folder. */
  readonly file: string;
  /** What the graph was built with (`VectorIndex.graphKey`). */
  readonly key: string;
  readonly bytes: number;
  readonly crc: number;
  /** Rows of the snapshot it holds (the first ones). */
  readonly rows: number;
}

interface Header {
  readonly format: number;
  readonly key: string;
  readonly content: string;
  readonly dims: number;
  readonly items: number;
  readonly rows: number;
  readonly graph: GraphRef | null;
  readonly sections: readonly Section[];
  readonly bodyBytes: number;
  readonly bodyCrc: number;
}

/** What a vector file says about itself besides the snapshot. */
export interface VectorMeta {
  /** What the vectors were made with (model, dimensions): a file of another key is refused. */
  readonly key: string;
  /** Fingerprint of the content it holds (`contentFingerprint` of its items' fingerprints). */
  readonly content: string;
  readonly graph: GraphRef | null;
}

/** A vector file that cannot be used, and why. */
export class VectorFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VectorFileError';
  }
}

/** Lines of the ids section scanned, items and rows checked, between two `pause`s of `decodeVectors`. */
const SCAN_STEP = 65_536;
const CHECK_STEP = 262_144;
/** Lines of the ids section `IdLines.read` parses between two looks at its caller's `step`. */
const IDS_PART_LINES = 256;

/**
 * The ids section: a JSON array of strings and nulls, one a line (a string's own line breaks are
 * escaped in JSON), so that it can be read back in steps: `JSON.parse` of 1M ids in one turn held
 * the event loop for 360-650 ms of CPU at a start.
 */
function idsJson(ids: ReadonlyArray<string | null>): string {
  return `[${ids.map((id) => JSON.stringify(id)).join(',\n')}]`;
}

const badIds = () => new VectorFileError('section ids is not a list of strings and nulls');
const N = 0x6e;
const U = 0x75;
const L = 0x6c;

/** The string of a JSON string literal's text, or `VectorFileError`. */
function jsonString(text: string): string {
  let got: unknown;
  try {
    got = JSON.parse(text);
  } catch {
    throw badIds();
  }
  if (typeof got !== 'string') throw badIds();
  return got;
}

/**
 * A file's ids, one JSON string or `null` a line (`idsJson`), scanned but not parsed: which slots
 * are removed is known, the strings are made by `read`. A 1M restart parsed them into an array of
 * new strings that the index then took: ~300 MB of heap marked in one pause of the collector during
 * that parse (issue 41); the index parses them itself now, in steps, and keeps the strings its
 * caller already holds (`VectorIndex.restore`'s `known`).
 */
export class IdLines implements IdReader {
  constructor(
    /** The section's bytes: `[`, the lines, `]`. */
    private readonly bytes: Buffer,
    /** Whether each slot's line is `null` (1) or a string (0). */
    private readonly nulls: Uint8Array,
  ) {}

  /** Slots. */
  get length(): number {
    return this.nulls.length;
  }

  /** Whether slot `s` is a removed item's. */
  removed(s: number): boolean {
    return this.nulls[s] === 1;
  }

  /**
   * Parses the ids in slot order, `each(id, slot)`, a line at a time, awaiting what `step` returns
   * every `IDS_PART_LINES` lines (a `stepper`'s: a turn of the loop once its budget is spent); throws
   * `VectorFileError` when a line is not a JSON string or `null`. A string without escapes is cut
   * from the bytes, not parsed: `JSON.parse` internalises strings of up to 10 characters, and 1M
   * ids in V8's string table grew it in single turns of 50 and 114 ms of CPU at a 1M restart.
   */
  async read(each: (id: string | null, slot: number) => void, step: () => Promise<void> | undefined): Promise<void> {
    const { bytes } = this;
    const end = bytes.length - 1;
    let slot = 0;
    for (let at = 1; at < end;) {
      let to = bytes.indexOf(NEWLINE, at);
      if (to < 0 || to > end) to = end;
      // The line `at..to` ends with the comma before the next line (none before the closing bracket).
      const last = bytes[to - 1] === COMMA ? to - 1 : to;
      if (slot >= this.nulls.length) throw badIds();
      each(this.lineId(at, last, slot), slot);
      slot++;
      at = to + 1;
      if (slot % IDS_PART_LINES === 0 && at < end) {
        const s = step();
        if (s) await s;
      }
    }
    if (slot !== this.nulls.length) throw badIds();
  }

  /** The id of the line `from..to` (its comma left out) of slot `slot`. */
  private lineId(from: number, to: number, slot: number): string | null {
    const { bytes } = this;
    if (this.removed(slot)) {
      const isNull =
        to - from === 4 && bytes[from] === N && bytes[from + 1] === U && bytes[from + 2] === L && bytes[from + 3] === L;
      if (!isNull) throw badIds();
      return null;
    }
    if (to - from < 2 || bytes[from] !== QUOTE || bytes[to - 1] !== QUOTE) throw badIds();
    for (let i = from + 1; i < to - 1; i++) {
      const c = bytes[i];
      // An escape, a quote or a control character: JSON's own reading (ids with escapes are rare).
      if (c === BACKSLASH || c === QUOTE || c < SPACE) return jsonString(bytes.toString('utf8', from, to));
    }
    return bytes.toString('utf8', from + 1, to - 1);
  }
}

/**
 * The ids of `idsJson`'s bytes: `IdLines` (scanned, `SCAN_STEP` lines at a time), or, for a file
 * written before the ids were one a line, the array parsed at once.
 */
async function scanIds(
  bytes: Buffer,
  items: number,
  pause: () => Promise<void>,
): Promise<IdLines | Array<string | null>> {
  if (bytes.length < 2 || bytes[0] !== OPEN_ARRAY || bytes[bytes.length - 1] !== CLOSE_ARRAY) throw badIds();
  const end = bytes.length - 1;
  if (items > 1 && bytes.indexOf(NEWLINE) < 0) {
    let got: unknown;
    try {
      got = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw badIds();
    }
    if (!Array.isArray(got) || got.some((x) => x !== null && typeof x !== 'string')) throw badIds();
    return got as Array<string | null>;
  }
  const nulls = new Uint8Array(items);
  let n = 0;
  for (let at = 1; at < end; n++) {
    if (n >= items) throw badIds();
    if (n % SCAN_STEP === SCAN_STEP - 1) await pause();
    const first = bytes[at];
    if (first === N) nulls[n] = 1;
    else if (first !== QUOTE) throw badIds();
    const nl = bytes.indexOf(NEWLINE, at);
    at = nl < 0 || nl > end ? end : nl + 1;
  }
  if (n !== items) throw badIds();
  return new IdLines(bytes, nulls);
}

const bytesOf = (a: ArrayBufferView): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** The file's bytes, in parts to write in order; `pause` is awaited between checksum steps. */
export async function encodeVectors(
  snap: VectorSnapshot,
  meta: VectorMeta,
  pause: () => Promise<void>,
): Promise<Buffer[]> {
  // Each section in one or more parts (the vectors: the index's blocks), written one after the other.
  const arrays: Array<[string, SectionType, Buffer[]]> = [
    ['ids', 'json', [Buffer.from(idsJson(snap.ids), 'utf8')]],
    ['fingerprints', 'u32', [bytesOf(snap.fingerprints)]],
    ['first', 'i32', [bytesOf(snap.first)]],
    ['count', 'i32', [bytesOf(snap.count)]],
    ['rowSlot', 'i32', [bytesOf(snap.rowSlot)]],
    ['vectors', 'f32', snap.vectors.map(bytesOf)],
  ];
  const sections: Section[] = [];
  const body: Buffer[] = [];
  let offset = 0;
  for (const [name, type, parts] of arrays) {
    const bytes = parts.reduce((n, p) => n + p.length, 0);
    sections.push({ name, type, offset, bytes });
    body.push(...parts.slice(0, -1));
    // Only the last part is padded: every part but the last holds whole 4-byte numbers, so the section is contiguous.
    offset += bytes - (parts.at(-1)?.length ?? 0) + pushPadded(body, parts.at(-1) ?? Buffer.alloc(0));
  }
  const header: Header = {
    format: FORMAT,
    key: meta.key,
    content: meta.content,
    dims: snap.dims,
    items: snap.ids.length,
    rows: snap.rowSlot.length,
    graph: meta.graph,
    sections,
    bodyBytes: offset,
    bodyCrc: await crcInSteps(body, pause),
  };
  return [encodeHead(MAGIC, header), ...body];
}

/**
 * The snapshot and meta of a vector file's bytes, after checking both checksums, every section's
 * place and every array's length and values against the others. Arrays are views into `buf`
 * (copied when it is not 8-byte aligned).
 */
export async function decodeVectors(
  buf: Buffer,
  key: string,
  pause: () => Promise<void>,
): Promise<{ snap: StoredSnapshot; meta: VectorMeta }> {
  const head = decodeHead(buf, MAGIC, 'vector file', (reason) => new VectorFileError(reason));
  const header = head.header as Header;
  if (header.format !== FORMAT)
    throw new VectorFileError(`format ${String(header.format)}, this version reads ${FORMAT}`);
  if (header.key !== key)
    throw new VectorFileError(`made with ${JSON.stringify(header.key)}, this index uses ${JSON.stringify(key)}`);
  const end = head.bodyStart + header.bodyBytes;
  if (buf.length !== end)
    throw new VectorFileError(
      `${buf.length < end ? 'truncated' : 'extended'}: ${buf.length} bytes, the header says ${end}`,
    );
  let body = buf.subarray(head.bodyStart);
  if ((await crcInSteps([body], pause)) !== header.bodyCrc)
    throw new VectorFileError('damaged: body checksum mismatch');
  if (body.byteOffset % 8 !== 0) body = Buffer.from(body);
  const byName = new Map(header.sections.map((s) => [s.name, s]));
  const section = (name: string, type: SectionType): Buffer => {
    const s = byName.get(name);
    if (!s || s.type !== type || s.offset % 8 !== 0 || s.offset + s.bytes > body.length)
      throw new VectorFileError(`section ${name} is missing or out of place`);
    return body.subarray(s.offset, s.offset + s.bytes);
  };
  const view = <T>(name: string, type: SectionType, make: new (b: ArrayBufferLike, o: number, n: number) => T): T => {
    const b = section(name, type);
    if (b.length % 4 !== 0) throw new VectorFileError(`section ${name} has a partial element`);
    return new make(b.buffer, b.byteOffset, b.length / 4);
  };
  if (!Number.isInteger(header.items) || header.items < 0) throw new VectorFileError('inconsistent: item or row count');
  const ids = await scanIds(section('ids', 'json'), header.items, pause);
  const snap: StoredSnapshot = {
    dims: header.dims,
    ids,
    fingerprints: view('fingerprints', 'u32', Uint32Array),
    first: view('first', 'i32', Int32Array),
    count: view('count', 'i32', Int32Array),
    rowSlot: view('rowSlot', 'i32', Int32Array),
    vectors: [view('vectors', 'f32', Float32Array)],
  };
  const fail = (what: string): never => {
    throw new VectorFileError(`inconsistent: ${what}`);
  };
  const n = ids.length;
  const rows = snap.rowSlot.length;
  const removed = Array.isArray(ids) ? (s: number) => ids[s] === null : (s: number) => ids.removed(s);
  if (!Number.isInteger(header.dims) || header.dims < 1) fail('dimensions');
  if (n !== header.items || rows !== header.rows) fail('item or row count');
  if (snap.fingerprints.length !== n || snap.first.length !== n || snap.count.length !== n) fail('per-item arrays');
  if (snap.vectors[0].length !== rows * header.dims) fail('vectors');
  for (let s = 0; s < n; s++) {
    if (s % CHECK_STEP === CHECK_STEP - 1) await pause();
    const from = snap.first[s];
    const c = snap.count[s];
    if (from < 0 || c < 0 || from + c > rows) fail(`rows of item ${s}`);
    if (!removed(s)) for (let r = from; r < from + c; r++) if (snap.rowSlot[r] !== s) fail(`rows of item ${s}`);
  }
  for (let r = 0; r < rows; r++) {
    if (r % CHECK_STEP === CHECK_STEP - 1) await pause();
    const s = snap.rowSlot[r];
    if (s < -1 || s >= n || (s >= 0 && removed(s))) fail(`row ${r}`);
  }
  const g = header.graph;
  if (g !== null && (typeof g.file !== 'string' || !/^[\w.-]+$/.test(g.file) || !(g.rows >= 0 && g.rows <= rows)))
    fail('graph reference');
  return { snap, meta: { key: header.key, content: header.content, graph: g } };
}
