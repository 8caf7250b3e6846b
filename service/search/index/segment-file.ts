import { crcInSteps, decodeHead, encodeHead, pushPadded } from '../../lib/framed-file';
import { idList, type SealedIndex } from './merge';

/**
 * The on-disk form of a `SealedIndex` (a merged base segment), read back without analysing
 * anything: typed arrays are views straight into the file's buffer.
 *
 * Layout: the 8 bytes `SRCHSEG1`; the header's byte length (u32 LE) and its CRC-32 (u32 LE); the
 * header, JSON; zero padding to a multiple of 8; the body: one section per array, each at an
 * offset that is a multiple of 8 (so `Int32Array`/`Float64Array` views need no copy), padded
 * with zeros. The header names every section (type, offset, byte length), the body's length and
 * its CRC-32, the index's `key` (what the terms were made with) and the content fingerprint the
 * segment matches. Anything that does not add up (a flipped byte anywhere, a truncated or
 * extended file, another format or key) is refused with the reason; nothing is trusted before
 * both checksums pass.
 */

const MAGIC = Buffer.from('SRCHSEG1', 'latin1');
// 2: positions (issue 28's sixth slice: `posField` in the header, sections `posStart` and `posBytes`).
const FORMAT = 2;

type SectionType = 'i32' | 'u32' | 'u16' | 'u8' | 'f64' | 'json';

interface Section {
  readonly name: string;
  readonly type: SectionType;
  readonly offset: number;
  readonly bytes: number;
}

interface Header {
  readonly format: number;
  readonly key: string;
  readonly content: string;
  readonly fields: readonly string[];
  /** The field whose positions are kept, −1 for none. */
  readonly posField: number;
  readonly documents: number;
  readonly terms: number;
  readonly sections: readonly Section[];
  readonly bodyBytes: number;
  readonly bodyCrc: number;
}

/** What a segment file says about itself, besides the index. */
export interface SegmentMeta {
  /** What the terms were made with (analyser, fields, format): a segment of another key is refused. */
  readonly key: string;
  /** Fingerprint of the content the segment holds (`contentFingerprint`). */
  readonly content: string;
}

/** A segment file that cannot be used, and why. */
export class SegmentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SegmentError';
  }
}

/** Fingerprint of a set of documents from their fingerprints: count and sum, independent of order. */
export function contentFingerprint(fingerprints: Uint32Array): string {
  let sum = 0;
  let x = 0;
  for (let i = 0; i < fingerprints.length; i++) {
    sum = (sum + fingerprints[i]) % 0x100000000;
    x = (x ^ Math.imul(fingerprints[i], 0x9e3779b1)) >>> 0;
  }
  return `${fingerprints.length}-${sum.toString(16)}-${x.toString(16)}`;
}

function bytesOf(a: ArrayBufferView): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** Strings a piece of `jsonInSteps` holds: at 1M ids, ~0.3 MB of JSON a step. */
const JSON_STEP_STRINGS = 16_384;

/**
 * `JSON.stringify` of the strings `get(0)` … `get(count - 1)` as UTF-8, the same bytes, in pieces
 * of `JSON_STEP_STRINGS` strings with `pause()` awaited after each: the ids of a 1M-document
 * segment stringified and encoded in one go were ~25 MB in one step of the event loop (issue 39).
 */
async function jsonInSteps(count: number, get: (i: number) => string, pause: () => Promise<void>): Promise<Buffer[]> {
  if (count === 0) return [Buffer.from('[]', 'utf8')];
  const out: Buffer[] = [];
  for (let at = 0; at < count; at += JSON_STEP_STRINGS) {
    const end = Math.min(count, at + JSON_STEP_STRINGS);
    const piece: string[] = [];
    for (let i = at; i < end; i++) piece.push(get(i));
    const inner = JSON.stringify(piece).slice(1, -1);
    out.push(Buffer.from(`${at === 0 ? '[' : ','}${inner}${end === count ? ']' : ''}`, 'utf8'));
    await pause();
  }
  return out;
}

/**
 * The file's bytes, in parts to write in order. `pause` is awaited between steps of a few
 * milliseconds each (checksums, string encoding), so encoding never holds the event loop long.
 */
export async function encodeSegment(
  sealed: SealedIndex,
  meta: SegmentMeta,
  pause: () => Promise<void>,
): Promise<Buffer[]> {
  // A section's bytes may come in pieces (the JSON ones, made in steps): written one after another.
  const arrays: Array<[string, SectionType, Buffer | Buffer[]]> = [];
  const { ids, terms } = sealed;
  arrays.push(['ids', 'json', await jsonInSteps(ids.length, (i) => ids.get(i), pause)]);
  arrays.push(['terms', 'json', await jsonInSteps(sealed.termCount, (i) => terms[i], pause)]);
  arrays.push(['fingerprints', 'u32', bytesOf(sealed.fingerprints)]);
  arrays.push(['avg', 'f64', bytesOf(sealed.avg)]);
  arrays.push(['lengths', 'i32', bytesOf(sealed.lengths)]);
  arrays.push(['fwdStart', 'i32', bytesOf(sealed.fwdStart)]);
  arrays.push(['fwdTerm', 'i32', bytesOf(sealed.fwdTerm)]);
  arrays.push(['fwdTf', 'u16', bytesOf(sealed.fwdTf)]);
  arrays.push(['posStart', 'i32', bytesOf(sealed.posStart)]);
  arrays.push(['posBytes', 'u8', bytesOf(sealed.posBytes)]);
  sealed.fields.forEach((_f, i) => {
    arrays.push([`start.${i}`, 'i32', bytesOf(sealed.start[i])]);
    arrays.push([`docs.${i}`, 'i32', bytesOf(sealed.docs[i])]);
    arrays.push([`tfs.${i}`, 'u16', bytesOf(sealed.tfs[i])]);
  });
  const sections: Section[] = [];
  const body: Buffer[] = [];
  let offset = 0;
  for (const [name, type, bytes] of arrays) {
    const pieces = Array.isArray(bytes) ? bytes : [bytes];
    const length = pieces.reduce((n, b) => n + b.length, 0);
    sections.push({ name, type, offset, bytes: length });
    for (const b of pieces.slice(0, -1)) body.push(b);
    offset += length - pieces[pieces.length - 1].length + pushPadded(body, pieces[pieces.length - 1]);
  }
  const header: Header = {
    format: FORMAT,
    key: meta.key,
    content: meta.content,
    fields: sealed.fields,
    posField: sealed.posField,
    documents: sealed.ids.length,
    terms: sealed.termCount,
    sections,
    bodyBytes: offset,
    bodyCrc: await crcInSteps(body, pause),
  };
  return [encodeHead(MAGIC, header), ...body];
}

/** The header of a segment file, checked; throws `SegmentError` when it is not one of ours, intact. */
function readHeader(buf: Buffer, key: string): { header: Header; bodyStart: number } {
  const head = decodeHead(buf, MAGIC, 'segment file', (reason) => new SegmentError(reason));
  const header = head.header as Header;
  const { bodyStart } = head;
  if (header.format !== FORMAT) throw new SegmentError(`format ${String(header.format)}, this version reads ${FORMAT}`);
  if (header.key !== key)
    throw new SegmentError(
      `built with ${JSON.stringify(header.key)}, this version indexes with ${JSON.stringify(key)}`,
    );
  if (buf.length !== bodyStart + header.bodyBytes) {
    throw new SegmentError(
      `${buf.length < bodyStart + header.bodyBytes ? 'truncated' : 'extended'}: ${buf.length} bytes, the header says ${bodyStart + header.bodyBytes}`,
    );
  }
  return { header, bodyStart };
}

/**
 * The index and content fingerprint of a segment file's bytes, after checking both checksums,
 * every section's place and every array's length against the others. Arrays are views into
 * `buf` (copied only if `buf` is not 8-byte aligned in memory). `pause` is awaited between
 * checksum slices.
 */
export async function decodeSegment(
  buf: Buffer,
  key: string,
  pause: () => Promise<void>,
): Promise<{ sealed: SealedIndex; content: string }> {
  const { header, bodyStart } = readHeader(buf, key);
  let body = buf.subarray(bodyStart);
  if ((await crcInSteps([body], pause)) !== header.bodyCrc) throw new SegmentError('damaged: body checksum mismatch');
  if (body.byteOffset % 8 !== 0) body = Buffer.from(body);
  const byName = new Map(header.sections.map((s) => [s.name, s]));
  const section = (name: string, type: SectionType): Buffer => {
    const s = byName.get(name);
    if (!s || s.type !== type || s.offset % 8 !== 0 || s.offset + s.bytes > body.length)
      throw new SegmentError(`section ${name} is missing or out of place`);
    return body.subarray(s.offset, s.offset + s.bytes);
  };
  const view = <T>(
    name: string,
    type: SectionType,
    make: new (b: ArrayBufferLike, o: number, n: number) => T,
    size: number,
  ): T => {
    const b = section(name, type);
    if (b.length % size !== 0) throw new SegmentError(`section ${name} has a partial element`);
    return new make(b.buffer, b.byteOffset, b.length / size);
  };
  const json = (name: string): string[] => {
    const v = JSON.parse(section(name, 'json').toString('utf8')) as unknown;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
      throw new SegmentError(`section ${name} is not a list of strings`);
    return v as string[];
  };
  const fields = header.fields;
  const nf = fields.length;
  const ids = json('ids');
  const terms = json('terms');
  const n = ids.length;
  const nt = terms.length;
  const sealed: SealedIndex = {
    fields,
    ids: idList(ids),
    fingerprints: view('fingerprints', 'u32', Uint32Array, 4),
    avg: view('avg', 'f64', Float64Array, 8),
    lengths: view('lengths', 'i32', Int32Array, 4),
    fwdStart: view('fwdStart', 'i32', Int32Array, 4),
    fwdTerm: view('fwdTerm', 'i32', Int32Array, 4),
    fwdTf: view('fwdTf', 'u16', Uint16Array, 2),
    posField: header.posField,
    posStart: view('posStart', 'i32', Int32Array, 4),
    posBytes: view('posBytes', 'u8', Uint8Array, 1),
    terms,
    termCount: nt,
    start: fields.map((_f, i) => view(`start.${i}`, 'i32', Int32Array, 4)),
    docs: fields.map((_f, i) => view(`docs.${i}`, 'i32', Int32Array, 4)),
    tfs: fields.map((_f, i) => view(`tfs.${i}`, 'u16', Uint16Array, 2)),
  };
  const fail = (what: string) => {
    throw new SegmentError(`inconsistent: ${what}`);
  };
  if (n !== header.documents || nt !== header.terms) fail('document or term count');
  if (
    sealed.fingerprints.length !== n ||
    sealed.avg.length !== nf ||
    sealed.lengths.length !== n * nf ||
    sealed.fwdStart.length !== n * nf + 1
  )
    fail('per-document arrays');
  if (sealed.fwdStart[n * nf] !== sealed.fwdTerm.length || sealed.fwdTf.length !== sealed.fwdTerm.length)
    fail('forward index');
  const { posStart, posBytes, posField } = sealed;
  if (!Number.isInteger(posField) || posField < -1 || posField >= nf) fail('field of positions');
  if (posStart.length !== n + 1 || posStart[0] !== 0 || posStart[n] !== posBytes.length) fail('positions');
  for (let d = 0; d < n; d++) if (posStart[d + 1] < posStart[d]) fail('positions');
  for (let f = 0; f < nf; f++) {
    const s = sealed.start[f];
    if (
      s.length !== nt + 1 ||
      s[0] !== 0 ||
      s[nt] !== sealed.docs[f].length ||
      sealed.tfs[f].length !== sealed.docs[f].length
    )
      fail(`postings of field ${fields[f]}`);
    for (let t = 0; t < nt; t++) if (s[t + 1] < s[t]) fail(`postings of field ${fields[f]}`);
  }
  return { sealed, content: header.content };
}
