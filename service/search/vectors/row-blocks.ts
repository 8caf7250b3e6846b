import { types } from 'node:util';
import { dotRow } from './exact-scan';

/** Rows a block holds (6 MiB at 384 dimensions). */
export const BLOCK_ROWS = 4096;

/** Bytes of a block of `dims` numbers a row. */
export const blockBytes = (dims: number): number => BLOCK_ROWS * dims * Float32Array.BYTES_PER_ELEMENT;

/**
 * The rows of a vector index (normalised vectors, `dims` numbers a row, numbered from 0 in the
 * order added) in blocks of `BLOCK_ROWS` rows, each a `Float32Array` over a `SharedArrayBuffer` of
 * its own, allocated whole when the previous one is full and never copied, moved or written again
 * once a row is in it. The graph's worker thread reads the same blocks (`shared` hands a block's
 * buffer over once; a message then names rows, never carries them), and the loop thread's exact
 * scan reads them too: one copy of each row in the process. Copying 6 MiB of rows a chunk to the
 * worker, each copy a new buffer for the collector, held the loop for up to 107 ms at 1M rows.
 *
 * Blocks restored from a persisted file are views of the file's bytes (copying them cost a second
 * 1.5 GB at every start at 1M rows); a restored block is copied into a shared one once, when the
 * worker must read it (a graph rebuilt from the rows), never while it only serves exact scans.
 *
 * A new block is the `spare` offered beforehand when there is one: the graph's worker allocates
 * it and touches each of its pages, so that the loop thread writing rows into it takes no page
 * faults. On these virtual machines a first touch of a page costs ~20 µs of the touching thread's
 * CPU: a turn of 1,000 rows of 384 numbers (375 pages) spent ~7.5 ms faulting (issue 41).
 */
export class RowBlocks {
  private readonly blocks: Float32Array[] = [];
  private count = 0;
  private spare: SharedArrayBuffer | undefined;

  constructor(readonly dims: number) {}

  /** Rows held. */
  get rows(): number {
    return this.count;
  }

  /** Whether a spare block would be taken (`offer`): none is held. */
  get wantsSpare(): boolean {
    return this.spare === undefined;
  }

  /** A zeroed shared buffer of `blockBytes(dims)`, whose pages are in memory: the next new block. */
  offer(spare: SharedArrayBuffer): void {
    if (spare.byteLength === blockBytes(this.dims)) this.spare = spare;
  }

  /** Appends `v` times `scale` as the next row (a new shared block when the last is full); its number. */
  append(v: ArrayLike<number>, scale: number): number {
    const { dims } = this;
    if (this.count % BLOCK_ROWS === 0) this.blocks.push(this.newBlock());
    const block = this.blocks[this.blocks.length - 1];
    const at = (this.count % BLOCK_ROWS) * dims;
    for (let d = 0; d < dims; d++) block[at + d] = v[d] * scale;
    return this.count++;
  }

  /** Dot product of row `r` with `q`. */
  dot(r: number, q: Float32Array): number {
    return dotRow(this.blocks[Math.floor(r / BLOCK_ROWS)], this.dims, r % BLOCK_ROWS, q);
  }

  /**
   * The shared buffer of block `b` (rows `b × BLOCK_ROWS` on), for the worker to read; a restored
   * block is copied into a shared one first, once (the index reads the copy from then on).
   */
  shared(b: number): SharedArrayBuffer {
    const block = this.blocks[b];
    // Not `instanceof`: a spare comes from the worker through a message, made in the main realm
    // (under jest the module's realm is another).
    // A block over a buffer of its own; a restored block views a file read into one shared buffer.
    if (
      types.isSharedArrayBuffer(block.buffer) &&
      block.byteOffset === 0 &&
      block.buffer.byteLength === block.byteLength
    )
      return block.buffer;
    const copy = this.newBlock();
    copy.set(block);
    this.blocks[b] = copy;
    return copy.buffer as SharedArrayBuffer;
  }

  /** The rows as consecutive parts, views of the blocks (rows are never written again once added). */
  parts(): Float32Array[] {
    return this.blocks.map((b, i) => b.subarray(0, Math.min(BLOCK_ROWS, this.count - i * BLOCK_ROWS) * this.dims));
  }

  /**
   * Rows from `parts` (rows × dims, consecutive): whole blocks are views of them, a partial block
   * is copied into a shared one (rows are added to it).
   */
  static from(dims: number, parts: readonly Float32Array[]): RowBlocks {
    const out = new RowBlocks(dims);
    for (const part of parts)
      for (let at = 0; at < part.length;) {
        const left = (part.length - at) / dims;
        const into = out.count % BLOCK_ROWS;
        if (into === 0 && left >= BLOCK_ROWS) {
          out.blocks.push(part.subarray(at, at + BLOCK_ROWS * dims));
          out.count += BLOCK_ROWS;
          at += BLOCK_ROWS * dims;
          continue;
        }
        if (into === 0) out.blocks.push(out.newBlock());
        const n = Math.min(left, BLOCK_ROWS - into);
        out.blocks[out.blocks.length - 1].set(part.subarray(at, at + n * dims), into * dims);
        out.count += n;
        at += n * dims;
      }
    return out;
  }

  /** A block's rows over a `SharedArrayBuffer`: the spare when one was offered. */
  private newBlock(): Float32Array {
    const buffer = this.spare ?? new SharedArrayBuffer(blockBytes(this.dims));
    this.spare = undefined;
    return new Float32Array(buffer);
  }
}
