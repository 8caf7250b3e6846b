import { crc32 } from 'node:zlib';

/**
 * The layout the persisted binary files share (the search segment, the content catalogue): 8
 * magic bytes, the header's byte length and its CRC-32 (u32 little-endian each), the header as
 * JSON, zero padding to a multiple of 8, then the body, each section padded to 8 bytes so that
 * typed arrays can view it in place.
 */
export const pad8 = (n: number): number => (n + 7) & ~7;

/** The head of a file: magic, header length and CRC-32, header JSON, padding. */
export function encodeHead(magic: Buffer, header: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const head = Buffer.alloc(pad8(16 + json.length));
  magic.copy(head, 0);
  head.writeUInt32LE(json.length, 8);
  head.writeUInt32LE(crc32(json), 12);
  json.copy(head, 16);
  return head;
}

/** Appends `bytes` and the zeros that pad it to 8 bytes to `parts`; returns the padded length. */
export function pushPadded(parts: Buffer[], bytes: Buffer): number {
  parts.push(bytes);
  const padded = pad8(bytes.length);
  if (padded > bytes.length) parts.push(Buffer.alloc(padded - bytes.length));
  return padded;
}

/**
 * The header of a file in this layout and where its body starts, checked (magic, length, CRC-32,
 * JSON); a failure is thrown as `fail(reason)`. The caller checks the header's fields.
 */
export function decodeHead(
  buf: Buffer,
  magic: Buffer,
  what: string,
  fail: (reason: string) => Error,
): { header: unknown; bodyStart: number } {
  if (buf.length < 16 || !buf.subarray(0, 8).equals(magic)) throw fail(`not a ${what} (bad magic bytes)`);
  const length = buf.readUInt32LE(8);
  if (16 + length > buf.length)
    throw fail(`truncated: the header says ${length} bytes, the file has ${buf.length - 16}`);
  const json = buf.subarray(16, 16 + length);
  if (crc32(json) !== buf.readUInt32LE(12)) throw fail('damaged: header checksum mismatch');
  try {
    return { header: JSON.parse(json.toString('utf8')) as unknown, bodyStart: pad8(16 + length) };
  } catch {
    throw fail('damaged: header is not JSON');
  }
}

/** Bytes CRC-32 reads between two pauses of `crcInSteps` (a few ms at zlib's speed). */
export const CRC_STEP_BYTES = 4 << 20;

/** CRC-32 of `parts` in order, awaiting `pause` between steps of `CRC_STEP_BYTES`, so a file of any size never holds the event loop for one long step. */
export async function crcInSteps(parts: readonly Uint8Array[], pause: () => Promise<void>): Promise<number> {
  let crc = 0;
  for (const p of parts) {
    for (let at = 0; at < p.length; at += CRC_STEP_BYTES) {
      crc = crc32(p.subarray(at, Math.min(p.length, at + CRC_STEP_BYTES)), crc);
      await pause();
    }
  }
  return crc;
}
