import { BLOCK_ROWS, blockBytes, RowBlocks } from '../../../../service/search/vectors/row-blocks';

const dims = 3;
const rowOf = (r: number) => [r + 1, -r, 0.5];

describe('RowBlocks (issue 41: rows shared with the graph worker)', () => {
  test('rows go into shared blocks of BLOCK_ROWS, allocated whole and never copied as more are added', () => {
    const blocks = new RowBlocks(dims);
    const rows = 2 * BLOCK_ROWS + 5;
    for (let r = 0; r < rows; r++) expect(blocks.append(rowOf(r), 2)).toBe(r);
    expect(blocks.rows).toBe(rows);
    const parts = blocks.parts();
    expect(parts.map((p) => p.length / dims)).toEqual([BLOCK_ROWS, BLOCK_ROWS, 5]);
    const buffers = parts.map((p) => p.buffer);
    for (const b of buffers) {
      expect(b).toBeInstanceOf(SharedArrayBuffer);
      expect(b.byteLength).toBe(BLOCK_ROWS * dims * 4);
    }
    // What the worker is handed is the block itself, and it stays the same buffer as rows are added.
    buffers.forEach((b, i) => expect(blocks.shared(i)).toBe(b));
    for (let r = rows; r < rows + BLOCK_ROWS; r++) blocks.append(rowOf(r), 2);
    buffers.forEach((b, i) => expect(blocks.parts()[i].buffer).toBe(b));
    expect(Array.from(blocks.parts()[2].subarray(0, dims))).toEqual(rowOf(2 * BLOCK_ROWS).map((x) => 2 * x));
    // Row BLOCK_ROWS + 1 is 2 × (BLOCK_ROWS + 2, −(BLOCK_ROWS + 1), 0.5).
    expect(blocks.dot(BLOCK_ROWS + 1, Float32Array.of(1, 1, 1))).toBe(3);
  });

  test('restored rows: whole blocks are views of the file, copied into a shared block once when the worker must read them; a partial block is shared and grows', () => {
    const rows = BLOCK_ROWS + 2;
    const file = new Float32Array(rows * dims);
    for (let r = 0; r < rows; r++) file.set(rowOf(r), r * dims);
    const blocks = RowBlocks.from(dims, [file]);
    expect(blocks.rows).toBe(rows);
    expect(blocks.parts()[0].buffer).toBe(file.buffer);
    expect(blocks.parts()[1].buffer).toBeInstanceOf(SharedArrayBuffer);
    const shared = blocks.shared(0);
    expect(shared).toBeInstanceOf(SharedArrayBuffer);
    expect(blocks.shared(0)).toBe(shared);
    expect(blocks.parts()[0].buffer).toBe(shared);
    expect(blocks.parts().map((p) => Array.from(p))).toEqual([
      Array.from(file.subarray(0, BLOCK_ROWS * dims)),
      Array.from(file.subarray(BLOCK_ROWS * dims)),
    ]);
    blocks.append(rowOf(rows), 1);
    expect(blocks.parts()[1].length).toBe(3 * dims);
    expect(blocks.dot(rows, Float32Array.of(1, 0, 0))).toBe(rows + 1);
  });

  test('rows restored from a file read into one SharedArrayBuffer: the worker is handed a block of its own, not the whole file', () => {
    const rows = 2 * BLOCK_ROWS;
    // The vector store reads its file into one shared buffer; the rows are a section inside it.
    const buffer = new SharedArrayBuffer(8 + rows * dims * 4);
    const file = new Float32Array(buffer, 8, rows * dims);
    for (let r = 0; r < rows; r++) file.set(rowOf(r), r * dims);
    const blocks = RowBlocks.from(dims, [file]);
    expect(blocks.parts()[1].buffer).toBe(buffer);
    const shared = blocks.shared(1);
    expect(shared).not.toBe(buffer);
    expect(shared.byteLength).toBe(blockBytes(dims));
    expect(blocks.shared(1)).toBe(shared);
    expect(Array.from(new Float32Array(shared, 0, dims))).toEqual(rowOf(BLOCK_ROWS));
    expect(blocks.parts()[0].buffer).toBe(buffer);
  });

  test('a spare offered is the next new block (one of the wrong size is not taken)', () => {
    const blocks = new RowBlocks(dims);
    expect(blocks.wantsSpare).toBe(true);
    blocks.offer(new SharedArrayBuffer(blockBytes(dims) - 4));
    expect(blocks.wantsSpare).toBe(true);
    const first = new SharedArrayBuffer(blockBytes(dims));
    blocks.offer(first);
    expect(blocks.wantsSpare).toBe(false);
    blocks.append(rowOf(0), 1);
    expect(blocks.parts()[0].buffer).toBe(first);
    expect(blocks.wantsSpare).toBe(true);
    const second = new SharedArrayBuffer(blockBytes(dims));
    blocks.offer(second);
    for (let r = 1; r <= BLOCK_ROWS; r++) blocks.append(rowOf(r), 1);
    expect(blocks.parts().map((p) => p.buffer)).toEqual([first, second]);
    expect(Array.from(blocks.parts()[1].subarray(0, dims))).toEqual(rowOf(BLOCK_ROWS));
    // Without a spare, a block of its own.
    for (let r = BLOCK_ROWS + 1; r <= 2 * BLOCK_ROWS; r++) blocks.append(rowOf(r), 1);
    expect(blocks.parts()[2].buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(blocks.parts()[2].buffer.byteLength).toBe(blockBytes(dims));
  });
});
