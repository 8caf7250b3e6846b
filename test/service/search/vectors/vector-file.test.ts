import { decodeVectors, encodeVectors, IdLines, VectorFileError } from '../../../../service/search/vectors/vector-file';
import type { StoredSnapshot, VectorSnapshot } from '../../../../service/search/vectors';

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

/** The ids of a decoded snapshot, parsed (`IdLines.read`), with the pauses between the steps. */
async function idsOf(snap: StoredSnapshot): Promise<{ ids: Array<string | null>; pauses: number }> {
  if (Array.isArray(snap.ids)) return { ids: [...snap.ids], pauses: 0 };
  const ids: Array<string | null> = [];
  let pauses = 0;
  await (snap.ids as IdLines).read(
    (id, slot) => {
      ids[slot] = id;
    },
    async () => {
      pauses++;
    },
  );
  return { ids, pauses };
}

describe('vector file: the ids section', () => {
  it('reads back ids with commas, quotes, line breaks and removed items, in steps (a pause between them)', async () => {
    const ids = Array.from({ length: 40_000 }, (_v, i) => (i % 7 === 0 ? null : `id ${i},\n"x"\\`));
    const bytes = Buffer.concat(await encodeVectors(snapshotOf(ids), META, async () => undefined));
    const { snap } = await decodeVectors(bytes, 'k', async () => undefined);
    // Scanned, not parsed: which slots are removed is known before the strings are made.
    expect(snap.ids).toBeInstanceOf(IdLines);
    expect((snap.ids as IdLines).removed(0)).toBe(true);
    expect((snap.ids as IdLines).removed(1)).toBe(false);
    const read = await idsOf(snap);
    expect(read.ids).toEqual(ids);
    // 40,000 lines, a look at the step every 256: 156 pauses.
    expect(read.pauses).toBeGreaterThanOrEqual(10);
  });

  it('reads an empty index and a one-item one', async () => {
    for (const ids of [[], ['a'], [null]]) {
      const bytes = Buffer.concat(await encodeVectors(snapshotOf(ids), META, async () => undefined));
      expect((await idsOf((await decodeVectors(bytes, 'k', async () => undefined)).snap)).ids).toEqual(ids);
    }
  });

  it('refuses, when they are read, lines that are not JSON strings or null, and a count that is not the slots', async () => {
    const lines = (text: string, slots: number, nulls: number[] = []) => {
      const flags = new Uint8Array(slots);
      for (const s of nulls) flags[s] = 1;
      return new IdLines(Buffer.from(text), flags).read(
        () => undefined,
        async () => undefined,
      );
    };
    await expect(lines('["a",\n"b"]', 2)).resolves.toBeUndefined();
    await expect(lines('["a",\n"b]', 2)).rejects.toThrow(VectorFileError);
    await expect(lines('["a",\n3]', 2)).rejects.toThrow(VectorFileError);
    await expect(lines('["a",\n"b"]', 3)).rejects.toThrow(VectorFileError);
    // A line read as null where the scan saw a string, or the reverse.
    await expect(lines('["a",\nnull]', 2)).rejects.toThrow(VectorFileError);
    await expect(lines('["a",\nnull]', 2, [1])).resolves.toBeUndefined();
  });

  it('refuses a file of another key with the reason, as before', async () => {
    const bytes = Buffer.concat(await encodeVectors(snapshotOf(['a']), META, async () => undefined));
    await expect(decodeVectors(bytes, 'other', async () => undefined)).rejects.toThrow(VectorFileError);
  });
});
