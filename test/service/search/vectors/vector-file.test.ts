import { decodeVectors, encodeVectors, VectorFileError } from '../../../../service/search/vectors/vector-file';
import type { VectorSnapshot } from '../../../../service/search/vectors';

/** A snapshot of one-number vectors: an item a row, a null id a removed item (its row dead). */
function snapshotOf(ids: Array<string | null>): VectorSnapshot {
  const n = ids.length;
  return {
    dims: 1,
    ids,
    fingerprints: new Uint32Array(n),
    first: Int32Array.from({ length: n }, (_v, i) => i),
    count: Int32Array.from({ length: n }, () => 1),
    rowSlot: Int32Array.from(ids, (id, i) => (id === null ? -1 : i)),
    vectors: [Float32Array.from({ length: n }, () => 1)],
  };
}

const META = { key: 'k', content: 'c', graph: null };

describe('vector file: the ids section', () => {
  it('reads back ids with commas, quotes, line breaks and removed items, in steps (a pause between them)', async () => {
    const ids = Array.from({ length: 40_000 }, (_v, i) => (i % 7 === 0 ? null : `id ${i},\n"x"\\`));
    const bytes = Buffer.concat(await encodeVectors(snapshotOf(ids), META, async () => undefined));
    let pauses = 0;
    const { snap } = await decodeVectors(bytes, 'k', async () => {
      pauses++;
    });
    expect(snap.ids).toEqual(ids);
    // 40,000 ids at 16,384 a step: three parses, two pauses between them (and the checksum's).
    expect(pauses).toBeGreaterThanOrEqual(3);
  });

  it('reads an empty index and a one-item one', async () => {
    for (const ids of [[], ['a'], [null]]) {
      const bytes = Buffer.concat(await encodeVectors(snapshotOf(ids), META, async () => undefined));
      expect((await decodeVectors(bytes, 'k', async () => undefined)).snap.ids).toEqual(ids);
    }
  });

  it('refuses a file of another key with the reason, as before', async () => {
    const bytes = Buffer.concat(await encodeVectors(snapshotOf(['a']), META, async () => undefined));
    await expect(decodeVectors(bytes, 'other', async () => undefined)).rejects.toThrow(VectorFileError);
  });
});
