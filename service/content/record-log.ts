import { crc32 } from 'node:zlib';

/**
 * Framing of the file store's records: one line per record,
 * `<byte length of json> <crc32 of json, 8 hex> <json>\n`. A reader stops at the first record
 * that is incomplete or fails its checksum: that is where a crash cut the last append.
 */

/** Encodes one record. */
export function encodeRecord(value: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  const head = Buffer.from(`${json.length} ${crc32(json).toString(16).padStart(8, '0')} `, 'ascii');
  return Buffer.concat([head, json, Buffer.from('\n')]);
}

/** What a reader found in a buffer of records. */
export interface DecodedRecords {
  /** Every intact record, in order. */
  readonly records: unknown[];
  /** Bytes covered by the intact records; anything after is a torn or corrupt tail. */
  readonly validBytes: number;
  /** True when bytes after `validBytes` were not an intact record. */
  readonly torn: boolean;
}

/** Decodes records until the end or the first bad one. */
export function decodeRecords(buf: Buffer): DecodedRecords {
  const records: unknown[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const sp1 = buf.indexOf(0x20, pos);
    if (sp1 < 0 || sp1 - pos > 12) break;
    const len = Number(buf.toString('ascii', pos, sp1));
    if (!Number.isInteger(len) || len < 0) break;
    const crcStart = sp1 + 1;
    const jsonStart = crcStart + 9;
    const end = jsonStart + len;
    if (end + 1 > buf.length || buf[crcStart + 8] !== 0x20 || buf[end] !== 0x0a) break;
    const json = buf.subarray(jsonStart, end);
    if (crc32(json).toString(16).padStart(8, '0') !== buf.toString('ascii', crcStart, crcStart + 8)) break;
    try {
      records.push(JSON.parse(json.toString('utf8')));
    } catch {
      break;
    }
    pos = end + 1;
  }
  return { records, validBytes: pos, torn: pos < buf.length };
}
