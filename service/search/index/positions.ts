import type { WindowCounts } from './cursor';
import { grow } from './growable';

/**
 * Term positions, compactly: per document, the token sequence of one field (the index's `text`)
 * with each token written as the index of its term among that field's forward entries (the
 * document's distinct terms in order of first occurrence), as a varint (7 bits a byte, high bit
 * = more). A document of fewer than 128 distinct terms takes one byte a token, one of fewer than
 * 16,384 two; the entries say which term each index is, so no term id is stored twice.
 */

/** Appends one document's token sequence to a byte stream (grown as needed). */
export class PositionWriter {
  /** The stream (reallocated when it grows: read it after the last `push`). */
  bytes: Uint8Array;
  /** End of the written part. */
  end: number;

  constructor(bytes: Uint8Array, end: number, tokens: number) {
    // One byte a token is the common case; `push` grows further when needed.
    this.bytes = grow(bytes, end + tokens);
    this.end = end;
  }

  /** Writes the next token, as the index of its term among the field's entries. */
  push(entry: number): void {
    let v = entry;
    while (v >= 0x80) {
      this.put((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    this.put(v);
  }

  private put(byte: number): void {
    if (this.end >= this.bytes.length) this.bytes = grow(this.bytes, this.end + 1);
    this.bytes[this.end++] = byte;
  }
}

/**
 * The positions (token offsets, increasing) of entries `ea` and `eb` in the stream
 * `bytes[from .. to)`, written into `pa` and `pb` (grown when short); returns the arrays and
 * how many of each.
 */
export function positionsOf(
  bytes: Uint8Array,
  from: number,
  to: number,
  ea: number,
  eb: number,
  pa: Int32Array,
  pb: Int32Array,
): { pa: Int32Array; na: number; pb: Int32Array; nb: number } {
  let na = 0;
  let nb = 0;
  let pos = 0;
  for (let i = from; i < to; pos++) {
    let v = bytes[i++];
    if (v >= 0x80) {
      v &= 0x7f;
      let shift = 7;
      let b: number;
      do {
        b = bytes[i++];
        v |= (b & 0x7f) << shift;
        shift += 7;
      } while (b >= 0x80);
    }
    if (v === ea) {
      if (na >= pa.length) pa = grow(pa, na + 1);
      pa[na++] = pos;
    } else if (v === eb) {
      if (nb >= pb.length) pb = grow(pb, nb + 1);
      pb[nb++] = pos;
    }
  }
  return { pa, na, pb, nb };
}

/**
 * The window counts of terms a and b (a ≠ b) at positions `pa[0 .. na)` and `pb[0 .. nb)`, both
 * increasing, as issue 28's ranking sweep (bench/search/sweep-collection.ts) counts them: `o`, the a
 * followed right after by b; `u`, the a that have a b within `window` tokens (|pos b − pos a| <
 * window), each b used once, every a taking the first unused such b. Linear: the a come in
 * order, so the first unused b in reach never lies before the last one taken.
 */
export function windowCounts(
  pa: Int32Array,
  na: number,
  pb: Int32Array,
  nb: number,
  window: number,
  out: WindowCounts,
): WindowCounts {
  let o = 0;
  let u = 0;
  let j = 0;
  let k = 0;
  for (let i = 0; i < na; i++) {
    const p = pa[i];
    while (k < nb && pb[k] < p + 1) k++;
    if (k < nb && pb[k] === p + 1) o++;
    while (j < nb && pb[j] <= p - window) j++;
    if (j < nb && pb[j] < p + window) {
      u++;
      j++;
    }
  }
  out.o = o;
  out.u = u;
  return out;
}
