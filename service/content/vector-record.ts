import type { VectorRecord } from './content-store';

/** First byte of an encoded record: the layout's version. */
const LAYOUT = 1;

/**
 * One `VectorRecord` as bytes, the form both stores keep (the Redis hash's value, the file
 * store's vector log): layout byte, fingerprint (u32), id, source and text hash (each a u16
 * byte length and UTF-8), vectors and dimensions (u32 each), then the numbers as little-endian
 * float32, 4 bytes each instead of some 20 as JSON text.
 */
export function encodeVectorRecord(r: VectorRecord): Buffer {
  const id = Buffer.from(r.id, 'utf8');
  const source = Buffer.from(r.source, 'utf8');
  const hash = Buffer.from(r.textHash, 'utf8');
  const dims = r.vectors[0]?.length ?? 0;
  const head = 1 + 4 + 2 + id.length + 2 + source.length + 2 + hash.length + 8;
  const buf = Buffer.alloc(head + 4 * dims * r.vectors.length);
  let at = buf.writeUInt8(LAYOUT, 0);
  at = buf.writeUInt32LE(r.fingerprint >>> 0, at);
  for (const s of [id, source, hash]) {
    at = buf.writeUInt16LE(s.length, at);
    at += s.copy(buf, at);
  }
  at = buf.writeUInt32LE(r.vectors.length, at);
  at = buf.writeUInt32LE(dims, at);
  for (const v of r.vectors) {
    if (v.length !== dims) throw new Error(`vectors of one record differ in length (${v.length}, ${dims})`);
    for (let k = 0; k < dims; k++) at = buf.writeFloatLE(v[k], at);
  }
  return buf;
}

/** The record of `encodeVectorRecord`'s bytes, or undefined when they are not one (damaged, another layout). */
export function decodeVectorRecord(buf: Buffer): VectorRecord | undefined {
  try {
    if (buf.readUInt8(0) !== LAYOUT) return undefined;
    const fingerprint = buf.readUInt32LE(1);
    let at = 5;
    const strings: string[] = [];
    for (let k = 0; k < 3; k++) {
      const n = buf.readUInt16LE(at);
      at += 2;
      if (at + n > buf.length) return undefined;
      strings.push(buf.toString('utf8', at, at + n));
      at += n;
    }
    const count = buf.readUInt32LE(at);
    const dims = buf.readUInt32LE(at + 4);
    at += 8;
    if (at + 4 * count * dims !== buf.length) return undefined;
    const vectors: Float32Array[] = [];
    for (let v = 0; v < count; v++) {
      const out = new Float32Array(dims);
      for (let k = 0; k < dims; k++, at += 4) out[k] = buf.readFloatLE(at);
      vectors.push(out);
    }
    const [id, source, textHash] = strings;
    return { id, fingerprint, source, textHash, vectors };
  } catch {
    return undefined;
  }
}
