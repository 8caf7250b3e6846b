import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VECTOR_FILE, VectorIndex, VectorStore, type VectorIndexOptions } from '../../../../service/search/vectors';
import { clusteredVectors } from '../../../../tools/corpus/clustered-vectors';
import { capture } from '../../../helpers/log-capture';

const dims = 16;
const OPTIONS: VectorIndexOptions = { dims, exactBelow: 200 };
const EXPECT = { key: 'model-a:16', content: '600-abc-def' };
const rows = clusteredVectors({ count: 600, dims, seed: 5 });
const vec = (i: number) => rows.subarray(i * dims, (i + 1) * dims);
const queries = Array.from({ length: 20 }, (_v, i) => vec(i * 29));

/** An index of 600 items (two passages for every third), a few removed, the graph built. */
async function built(): Promise<VectorIndex> {
  const index = new VectorIndex(OPTIONS);
  for (let i = 0; i < 600; i++) index.add(`d${i}`, i % 3 === 0 ? [vec(i), vec((i + 1) % 600)] : [vec(i)], i * 7);
  index.remove(['d5', 'd50', 'd500']);
  await index.settle();
  expect(index.hasGraph).toBe(true);
  return index;
}

const answers = (index: VectorIndex) => Promise.all(queries.map((q) => index.search(q, 10)));

describe('VectorStore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vector-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const rebuildSpy = () => {
    const calls: string[] = [];
    return {
      calls,
      rebuild: () => {
        calls.push('rebuild');
        return new VectorIndex(OPTIONS);
      },
    };
  };

  test('round trip: the items, their fingerprints, the graph and every answer come back as they were', async () => {
    const { logger, lines } = capture();
    const index = await built();
    const store = new VectorStore({ dir, logger });
    await store.save(index, EXPECT);
    const names = await readdir(dir);
    expect(names.filter((n) => n.endsWith('.usearch'))).toHaveLength(1);
    expect(names).toContain(VECTOR_FILE);
    expect(lines.some((l) => l.msg === 'vector index persisted')).toBe(true);
    const spy = rebuildSpy();
    const loaded = await new VectorStore({ dir, logger }).load(EXPECT, OPTIONS, spy.rebuild);
    expect(spy.calls).toEqual([]);
    expect(loaded.from).toBe('file');
    expect(loaded.graph).toBe(true);
    expect(loaded.index.size).toBe(597);
    expect(loaded.index.fingerprint('d7')).toBe(49);
    expect(loaded.index.has('d50')).toBe(false);
    expect(loaded.index.hasGraph).toBe(true);
    expect(loaded.index.pending).toBe(0);
    expect(await answers(loaded.index)).toEqual(await answers(index));
    // It goes on: adds and removes after the restart.
    loaded.index.add('new', [vec(1)]);
    loaded.index.remove(['d1']);
    // d0's second passage is vec(1) too: both score 1 (scored on the f32 rows), d1 is gone.
    expect((await loaded.index.search(vec(1), 2)).map((h) => h.id).sort()).toEqual(['d0', 'new']);
  });

  test("with the caller's items known: the same index, the known ids the file does not hold left out", async () => {
    const { logger } = capture();
    const index = await built();
    await new VectorStore({ dir, logger }).save(index, EXPECT);
    // The feed's items as a start gives them (their own strings), plus ids the file does not hold
    // (removed, or never added): none of those may be found after the load.
    const known = [...Array.from({ length: 600 }, (_v, i) => ({ id: `d${i}`.slice(0) })), { id: 'gone' }];
    const loaded = await new VectorStore({ dir, logger }).load(EXPECT, OPTIONS, rebuildSpy().rebuild, known);
    expect(loaded.from).toBe('file');
    expect(loaded.index.size).toBe(597);
    for (const id of ['d5', 'd50', 'd500', 'gone']) expect(loaded.index.has(id)).toBe(false);
    expect(loaded.index.fingerprint('d7')).toBe(49);
    expect(await answers(loaded.index)).toEqual(await answers(index));
    // Removing and adding after it, as without `known`.
    loaded.index.remove(['d7']);
    loaded.index.add('d5', [vec(5)]);
    expect([loaded.index.has('d7'), loaded.index.has('d5'), loaded.index.size]).toEqual([false, true, 597]);
    expect(loaded.index.snapshot().ids.filter((id) => id !== null)).toHaveLength(597);
    loaded.index.close();
    index.close();
  });

  test('round trip across blocks of rows: 9,000 vectors (blocks of 4,096) written as one section and read back', async () => {
    const { logger } = capture();
    const small = clusteredVectors({ count: 9000, dims: 4, seed: 9 });
    const opts = { dims: 4, exactBelow: Infinity };
    const index = new VectorIndex(opts);
    for (let i = 0; i < 9000; i++) index.add(`v${i}`, [small.subarray(i * 4, i * 4 + 4)]);
    index.remove(['v4095', 'v4096', 'v8999']);
    const store = new VectorStore({ dir, logger });
    await store.save(index, EXPECT);
    const loaded = await store.load(EXPECT, opts, rebuildSpy().rebuild);
    expect(loaded.from).toBe('file');
    expect(loaded.index.size).toBe(8997);
    for (const i of [0, 4094, 4097, 8191, 8192, 8998]) {
      const q = small.subarray(i * 4, i * 4 + 4);
      expect(await loaded.index.search(q, 5)).toEqual(await index.search(q, 5));
      expect((await loaded.index.search(q, 1))[0].id).toBe((await index.search(q, 1))[0].id);
    }
  });

  test('a second save replaces the first; older graphs are deleted', async () => {
    const { logger } = capture();
    const index = await built();
    const store = new VectorStore({ dir, logger });
    await store.save(index, EXPECT);
    index.remove(['d10']);
    await store.save(index, { ...EXPECT, content: 'later' });
    expect((await readdir(dir)).filter((n) => n.endsWith('.usearch'))).toHaveLength(1);
    const loaded = await store.load({ ...EXPECT, content: 'later' }, OPTIONS, rebuildSpy().rebuild);
    expect(loaded.from).toBe('file');
    expect(loaded.index.has('d10')).toBe(false);
    for (const q of queries) for (const h of await loaded.index.search(q, 10)) expect(h.id).not.toBe('d10');
  });

  test.each([
    ['a flipped byte in the body', (b: Buffer) => void (b[b.length - 5] ^= 0x10), /damaged: body checksum mismatch/],
    ['a flipped byte in the header', (b: Buffer) => void (b[20] ^= 0x01), /damaged: header checksum mismatch/],
    ['a truncated file', (b: Buffer) => b.subarray(0, b.length - 8), /truncated/],
    ['another file', () => Buffer.from('not a vector file at all'), /bad magic bytes/],
  ])('%s is refused with the reason and the index rebuilt, never served', async (_name, harm, reason) => {
    const { logger, lines } = capture();
    await new VectorStore({ dir, logger }).save(await built(), EXPECT);
    const file = join(dir, VECTOR_FILE);
    const buf = await readFile(file);
    await writeFile(file, harm(buf) ?? buf);
    const spy = rebuildSpy();
    const loaded = await new VectorStore({ dir, logger }).load(EXPECT, OPTIONS, spy.rebuild);
    expect(spy.calls).toEqual(['rebuild']);
    expect(loaded.from).toBe('rebuilt');
    expect(loaded.index.size).toBe(0);
    const warn = lines.find((l) => String(l.msg).startsWith('persisted vector index not used'));
    expect(String(warn?.reason)).toMatch(reason);
  });

  test.each([
    ['of other content (stale)', { ...EXPECT, content: '601-abc-def' }, /stale: it holds content 600-abc-def/],
    ['made with another model', { ...EXPECT, key: 'model-b:16' }, /made with "model-a:16"/],
  ])('a file %s is refused and rebuilt', async (_name, expect2, reason) => {
    const { logger, lines } = capture();
    await new VectorStore({ dir, logger }).save(await built(), EXPECT);
    const spy = rebuildSpy();
    const loaded = await new VectorStore({ dir, logger }).load(expect2, OPTIONS, spy.rebuild);
    expect(loaded.from).toBe('rebuilt');
    expect(spy.calls).toEqual(['rebuild']);
    expect(String(lines.find((l) => l.reason)?.reason)).toMatch(reason);
  });

  test('a missing file: rebuilt, logged as none yet', async () => {
    const { logger, lines } = capture();
    const loaded = await new VectorStore({ dir, logger }).load(EXPECT, OPTIONS, rebuildSpy().rebuild);
    expect(loaded.from).toBe('rebuilt');
    expect(lines.find((l) => l.reason)?.reason).toBe('none yet');
  });

  test('a damaged or missing graph is not loaded: the vectors are used and the graph rebuilt from them', async () => {
    const { logger, lines } = capture();
    const index = await built();
    await new VectorStore({ dir, logger }).save(index, EXPECT);
    const graph = join(dir, (await readdir(dir)).find((n) => n.endsWith('.usearch')) as string);
    const bytes = await readFile(graph);
    bytes[bytes.length - 3] ^= 0x40;
    await writeFile(graph, bytes);
    const loaded = await new VectorStore({ dir, logger }).load(EXPECT, OPTIONS, rebuildSpy().rebuild);
    expect(loaded.from).toBe('file');
    expect(loaded.graph).toBe(false);
    expect(String(lines.find((l) => String(l.msg).startsWith('vector graph not used'))?.reason)).toMatch(
      /damaged: checksum mismatch/,
    );
    await loaded.index.settle();
    expect(loaded.index.hasGraph).toBe(true);
    expect(loaded.index.size).toBe(597);
    await rm(graph);
    const again = await new VectorStore({ dir, logger }).load(EXPECT, OPTIONS, rebuildSpy().rebuild);
    expect(again.graph).toBe(false);
    expect(again.index.size).toBe(597);
  });
});
