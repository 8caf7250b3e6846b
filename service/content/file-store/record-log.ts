import { crc32 } from 'node:zlib';
import { DIGIT_0, DIGIT_9, NEWLINE, SPACE } from '../../lib/char-codes';

/**
 * Framing of the file store's records: one line per record,
 * `<byte length of json> <crc32 of json, 8 hex> <json>\n`. `JSON.stringify` never emits a raw
 * newline, so the only `\n` of an intact record is its last byte.
 *
 * A reader keeps every intact record: damage to one record (a flipped byte, garbage written
 * into the file) costs that record only. It resynchronizes on the next position where a whole
 * frame with a valid CRC parses. Any byte position is tried, not only those after a `\n`, so a
 * damaged terminator does not take the next record with it; a false frame would need a matching
 * CRC-32 over bytes that end on a real terminator.
 */

/** Encodes one record. */
export function encodeRecord(value: unknown): Buffer {
  return frame(JSON.stringify(value));
}

function frame(text: string): Buffer {
  const json = Buffer.from(text, 'utf8');
  const head = Buffer.from(`${json.length} ${crc32(json).toString(16).padStart(8, '0')} `, 'ascii');
  return Buffer.concat([head, json, Buffer.from('\n')]);
}

/** Characters of JSON text `encodeRecordInSteps` gathers before encoding them to bytes (and their CRC) in one go. */
const STEP_CHUNK_CHARS = 64 * 1024;
const NEWLINE_BYTE = Buffer.from('\n');

/**
 * `encodeRecord(value)`, the same bytes, for a plain object whose array fields may hold
 * megabytes (a batch's items): each element of a top-level array is stringified on its own, with
 * `step()` awaited after it (time-steps.ts), so a 10 MB record is not one step of the event loop
 * (it was ~80 ms). Its fields are read as `JSON.stringify` reads them (own enumerable keys in
 * order, undefined and functions left out of the object, `null` for them in an array).
 *
 * The text is turned into UTF-8 and its CRC-32 taken a chunk of about 64 K characters at a time
 * (the CRC carried from chunk to chunk): joined into one string, encoded and checksummed at the
 * end, the 10,000 items of a full upload (~12 MB) were a 40-60 ms step (issue 37). What remains
 * in one step is the copy of the chunks into the record's one buffer.
 */
export async function encodeRecordInSteps(
  value: Readonly<Record<string, unknown>>,
  step: () => Promise<void> | undefined,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let crc = 0;
  let parts: string[] = [];
  let chars = 0;
  const flush = () => {
    const chunk = Buffer.from(parts.join(''), 'utf8');
    crc = crc32(chunk, crc);
    bytes += chunk.length;
    chunks.push(chunk);
    parts = [];
    chars = 0;
  };
  const push = (text: string) => {
    parts.push(text);
    chars += text.length;
    if (chars >= STEP_CHUNK_CHARS) flush();
  };
  push('{');
  let first = true;
  for (const [k, v] of Object.entries(value)) {
    const whole = Array.isArray(v) ? undefined : JSON.stringify(v);
    if (!Array.isArray(v) && whole === undefined) continue;
    if (!first) push(',');
    first = false;
    push(`${JSON.stringify(k)}:`);
    if (!Array.isArray(v)) {
      push(whole!);
      continue;
    }
    push('[');
    for (let i = 0; i < v.length; i++) {
      push(`${i ? ',' : ''}${JSON.stringify(v[i]) ?? 'null'}`);
      await step();
    }
    push(']');
  }
  push('}');
  flush();
  const head = Buffer.from(`${bytes} ${crc.toString(16).padStart(8, '0')} `, 'ascii');
  return Buffer.concat([head, ...chunks, NEWLINE_BYTE], head.length + bytes + 1);
}

/** A half-open byte range `[start, end)` of a buffer. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** What a reader found in a buffer of records. */
export interface DecodedRecords {
  /** Every intact record, in order. */
  readonly records: unknown[];
  /** Byte ranges that hold no intact record, before the torn tail; in order. */
  readonly damaged: ByteRange[];
  /**
   * Length of the buffer without its torn tail: the bytes after the last `\n`, which can only be
   * an append cut short by a crash. Cutting the buffer here keeps every intact record and makes
   * the next record start on a fresh line.
   */
  readonly keepBytes: number;
  /** True when the buffer ends with a torn tail (bytes from `keepBytes` on). */
  readonly torn: boolean;
}

const MAX_LENGTH_DIGITS = 12;

function isDigit(b: number | undefined): boolean {
  return b !== undefined && b >= DIGIT_0 && b <= DIGIT_9;
}

/** Parses the frame starting at `pos`; returns the record and where it ends, or undefined. */
function frameAt(buf: Buffer, pos: number): { record: unknown; end: number } | undefined {
  let sp1 = pos;
  while (sp1 < buf.length && sp1 - pos <= MAX_LENGTH_DIGITS && isDigit(buf[sp1])) sp1++;
  if (sp1 === pos || sp1 - pos > MAX_LENGTH_DIGITS || buf[sp1] !== SPACE) return undefined;
  const len = Number(buf.toString('ascii', pos, sp1));
  const crcStart = sp1 + 1;
  const jsonStart = crcStart + 9;
  const end = jsonStart + len;
  if (end >= buf.length || buf[crcStart + 8] !== SPACE || buf[end] !== NEWLINE) return undefined;
  const json = buf.subarray(jsonStart, end);
  if (crc32(json).toString(16).padStart(8, '0') !== buf.toString('ascii', crcStart, crcStart + 8)) return undefined;
  try {
    return { record: JSON.parse(json.toString('utf8')), end: end + 1 };
  } catch {
    return undefined;
  }
}

/** Decodes every intact record, skipping damaged bytes between them. */
export function decodeRecords(buf: Buffer): DecodedRecords {
  const records: unknown[] = [];
  const damaged: ByteRange[] = [];
  const keepBytes = buf.lastIndexOf(NEWLINE) + 1;
  let pos = 0;
  let badFrom = -1;
  while (pos < keepBytes) {
    // Cheap pre-check: a frame starts with a digit. Skips most damaged bytes without parsing.
    const frame = isDigit(buf[pos]) ? frameAt(buf, pos) : undefined;
    if (!frame) {
      if (badFrom < 0) badFrom = pos;
      pos++;
      continue;
    }
    if (badFrom >= 0) {
      damaged.push({ start: badFrom, end: pos });
      badFrom = -1;
    }
    records.push(frame.record);
    pos = frame.end;
  }
  if (badFrom >= 0) damaged.push({ start: badFrom, end: keepBytes });
  return { records, damaged, keepBytes, torn: keepBytes < buf.length };
}
