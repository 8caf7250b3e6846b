import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capture } from '../../../helpers/log-capture';
import fc from 'fast-check';
import type { Item } from '../../../../service/content/item';
import { decodeHead, encodeHead } from '../../../../service/lib/framed-file';
import { CompactIndex } from '../../../../service/search/index/compact-index';
import { EmbeddedIndex, type EmbeddedIndexOptions } from '../../../../service/search/embedded-index';
import { SEGMENT_KEY } from '../../../../service/search/index-lifecycle';
import type { IndexQuery } from '../../../../service/search/search-index';
import type { IdList } from '../../../../service/search/index/merge';
import {
  contentFingerprint,
  decodeSegment,
  encodeSegment,
  SegmentError,
} from '../../../../service/search/index/segment-file';
import { SEGMENT_FILE, segmentDir, SegmentStore } from '../../../../service/search/index/segment-store';
import { yieldToLoop } from '../../../../service/lib/yield-to-loop';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

const WORDS = [
  'alpha',
  'beta',
  'gamma',
  'delta',
  'epsilon',
  'zeta',
  'theta',
  'kappa',
  'photon',
  'proton',
  'neutron',
  'laser',
  'beam',
];
const at = (n: number) => new Date(Date.UTC(2026, 0, 1) + n).toISOString();
const item = (id: number, words: readonly string[], version = 0, extra: Partial<Item> = {}): Item => ({
  id: `d${id}`,
  type: id % 3 ? 'article' : 'project',
  title: words.slice(0, 2).join(' '),
  body: `**${words.join(' ')}** [see](https://example.com/x)`,
  tags: id % 4 ? [] : ['Tagged'],
  created_at: at(0),
  updated_at: at(version),
  ...extra,
});
const corpus = (n: number, seed = 1): Item[] =>
  Array.from({ length: n }, (_, i) =>
    item(
      i,
      Array.from({ length: 3 + ((i * seed) % 9) }, (_x, j) => WORDS[(i * 7 + j * (seed + 2)) % WORDS.length]),
    ),
  );
const QUERIES: IndexQuery[] = [
  { text: 'alpha photon', limit: 10, offset: 0 },
  { text: 'laser beam gamma delta zeta', limit: 5, offset: 2 },
  { text: 'neutr', limit: 10, offset: 0 },
  { text: 'theta kappa', limit: 10, offset: 0, filter: { type: ['project'] } },
  { text: 'beta epsilon proton', limit: 10, offset: 0, filter: { tag: ['tagged'] } },
];
const RANKING: EmbeddedIndexOptions = {
  coordination: true,
  expansion: { enabled: true, fbDocs: 3, fbTerms: 5, originalWeight: 0.5, minDocs: 1 },
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'segment-test-'));
});
/** Every start's index and store: settled and closed before the folder goes, so no background write recreates it. */
const started: { index: EmbeddedIndex; segments: SegmentStore }[] = [];
afterEach(async () => {
  for (const { index, segments } of started.splice(0)) {
    await index.settled().catch(() => undefined);
    await segments.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

/** A replica start: a fresh index over `dir`, built (or loaded) from `items`. */
async function start(items: readonly Item[], opts: EmbeddedIndexOptions = {}) {
  const { logger, lines } = capture();
  const segments = new SegmentStore({ dir, logger });
  const index = new EmbeddedIndex({ ...RANKING, segments, ...opts });
  started.push({ index, segments });
  await index.replaceAll(items);
  const messages = () => lines.map((l) => String(l.msg));
  return {
    index,
    segments,
    lines,
    loaded: () => messages().some((m) => m.startsWith('search index loaded from the persisted segment')),
  };
}

async function fresh(items: readonly Item[]): Promise<EmbeddedIndex> {
  const index = new EmbeddedIndex(RANKING);
  await index.replaceAll(items);
  return index;
}

async function expectServesLike(index: EmbeddedIndex, want: EmbeddedIndex): Promise<void> {
  expect(index.size()).toBe(want.size());
  // The same pages to the last bit (issue 39: length averages are exact sums over the live documents).
  for (const q of QUERIES) expect(await index.search(q)).toEqual(await want.search(q));
}

describe('persisted search segments', () => {
  it('a replica starting with the segment intact loads it instead of rebuilding, and serves exactly what the builder served', async () => {
    const items = corpus(300);
    const a = await start(items);
    expect(a.loaded()).toBe(false);
    await a.index.settled();
    expect(readdirSync(dir)).toEqual([SEGMENT_FILE]);
    const b = await start(items);
    expect(b.loaded()).toBe(true);
    expect(b.lines.find((l) => String(l.msg).startsWith('search index loaded'))).toMatchObject({
      documents: 300,
      changed: 0,
      removed: 0,
    });
    // The vocabulary's look-up structures are built before the restored index serves (no look-up scans every term).
    expect(b.index.vocabularyUncovered).toBe(0);
    // Nothing changed in between: the same numbers to the last bit, snippets included.
    for (const q of QUERIES) expect(await b.index.search(q)).toEqual(await a.index.search(q));
  });

  it('queries after a restore (short, expanded, filtered, with snippets) look no id up and enter no restored metadata; the first write enters it and serves as a fresh build', async () => {
    const items = corpus(300);
    await (await start(items)).index.settled();
    const b = await start(items);
    expect(b.loaded()).toBe(true);
    expect(b.index.metadataPending).toBe(true);
    // A query reads its hits by their short ids: no look-up by id (which entered every restored id at once).
    const byId = jest.spyOn(CompactIndex.prototype, 'shortId');
    try {
      await expectServesLike(b.index, await fresh(items));
      expect(byId).not.toHaveBeenCalled();
    } finally {
      byId.mockRestore();
    }
    // Turns for any background job: none enters the metadata.
    for (let i = 0; i < 100; i++) await yieldToLoop();
    expect(b.index.metadataPending).toBe(true);
    await b.index.upsert([item(6, ['omega', 'photon'], 9)]);
    const now = items.map((i) => (i.id === 'd6' ? item(6, ['omega', 'photon'], 9) : i));
    await expectServesLike(b.index, await fresh(now));
    await b.index.settled();
    expect(b.index.metadataPending).toBe(false);
    await expectServesLike(b.index, await fresh(now));
  });

  it('writes while the restored metadata is entered in the background, and the merges they start, serve as a fresh build', async () => {
    // More documents than one step of the fill enters, slices of 0 ms: the fill yields between
    // steps, and writes, merges (every few documents) and queries come in between.
    const items = corpus(2500);
    await (await start(items)).index.settled();
    const b = await start(items, { indexSliceMs: 0, minMergeDocs: 2 });
    expect(b.loaded()).toBe(true);
    const changed = [
      item(2300, ['omega', 'photon'], 9),
      item(4000, ['omega', 'laser'], 1),
      item(2200, ['omega', 'beam'], 9),
    ];
    await b.index.upsert(changed.slice(0, 2));
    await b.index.remove(['d9', 'd2400']);
    await b.index.upsert(changed.slice(2));
    const now = [
      ...items.filter((i) => i.id !== 'd9' && i.id !== 'd2400' && !changed.some((c) => c.id === i.id)),
      ...changed,
    ];
    const want = await fresh(now);
    // The written documents' pages and snippets (the fill must not put their restored metadata back).
    const written: IndexQuery[] = [
      { text: 'omega', limit: 10, offset: 0 },
      { text: 'omega photon beam', limit: 10, offset: 0 },
      { text: 'omega laser', limit: 10, offset: 0, filter: { type: ['article'] } },
    ];
    const same = async () => {
      await expectServesLike(b.index, want);
      for (const q of written) expect(await b.index.search(q)).toEqual(await want.search(q));
    };
    await same();
    await b.index.settled();
    expect(b.index.metadataPending).toBe(false);
    await same();
  });

  it('right after a restore (id map and metadata not entered yet), writes and filtered queries serve as a fresh build', async () => {
    const items = corpus(300);
    await (await start(items)).index.settled();
    const b = await start(items);
    expect(b.loaded()).toBe(true);
    // Before any background slice has run: a write, a removal, then every query.
    await b.index.upsert([item(6, ['omega', 'photon'], 9)]);
    await b.index.remove(['d9']);
    const now = items.filter((i) => i.id !== 'd9').map((i) => (i.id === 'd6' ? item(6, ['omega', 'photon'], 9) : i));
    const want = await fresh(now);
    await expectServesLike(b.index, want);
    const c = await start(items);
    expect(c.loaded()).toBe(true);
    await expectServesLike(c.index, await fresh(items));
  });

  it('re-indexes only what changed since the segment was written: updated, added and removed items', async () => {
    const items = corpus(200);
    const a = await start(items);
    await a.index.settled();
    const now = [
      ...items.slice(10),
      item(3, ['omega', 'photon', 'laser'], 5),
      item(500, ['brand', 'new', 'photon'], 1),
    ].filter((i, k, all) => all.findIndex((j) => j.id === i.id) === k);
    const b = await start(now);
    expect(b.loaded()).toBe(true);
    expect(b.lines.find((l) => String(l.msg).startsWith('search index loaded'))).toMatchObject({
      documents: 200,
      changed: 2,
      removed: 9,
    });
    await expectServesLike(b.index, await fresh(now));
    expect((await b.index.search({ text: 'omega', limit: 10, offset: 0 })).hits.map((h) => h.id)).toEqual(['d3']);
  });

  it('after re-indexing what changed, persists again: the next start has nothing to redo', async () => {
    const items = corpus(100);
    await (await start(items)).index.settled();
    const now = items.map((i) => (i.id === 'd5' ? item(5, ['omega'], 3) : i));
    const b = await start(now);
    expect(b.loaded()).toBe(true);
    await b.index.settled();
    const c = await start(now);
    expect(c.lines.find((l) => String(l.msg).startsWith('search index loaded'))).toMatchObject({
      documents: 100,
      changed: 0,
      removed: 0,
    });
  });

  it('once writes pause (checkpointIdleMs), merges and persists them', async () => {
    const items = corpus(60);
    const a = await start(items, { checkpointIdleMs: 20 });
    await a.index.settled();
    await a.index.upsert([item(1000, ['late', 'photon'], 1), item(4, ['changed'], 2)]);
    await new Promise((r) => setTimeout(r, 100));
    await a.index.settled();
    const now = [...items.filter((i) => i.id !== 'd4'), item(4, ['changed'], 2), item(1000, ['late', 'photon'], 1)];
    const b = await start(now);
    expect(b.lines.find((l) => String(l.msg).startsWith('search index loaded'))).toMatchObject({
      documents: 61,
      changed: 0,
      removed: 0,
    });
    await expectServesLike(b.index, await fresh(now));
  });

  it('an item whose text changed with a new updated_at is re-indexed, even at the same lengths', async () => {
    const items = corpus(50);
    const a = await start(items);
    await a.index.settled();
    const swapped = items.map((i) =>
      i.id === 'd7' ? { ...i, title: 'zzzzz qqqqq'.slice(0, i.title.length), updated_at: at(9) } : i,
    );
    const b = await start(swapped);
    expect(b.loaded()).toBe(true);
    await expectServesLike(b.index, await fresh(swapped));
  });

  it.each([
    ['a flipped byte in the header', (buf: Buffer) => void (buf[20] ^= 0x01)],
    ['a flipped byte in the body', (buf: Buffer) => void (buf[Math.floor(buf.length / 2)] ^= 0x40)],
    ['a flipped last byte', (buf: Buffer) => void (buf[buf.length - 1] ^= 0x80)],
    ['the magic bytes overwritten', (buf: Buffer) => void buf.write('XXXX', 0)],
  ])('a damaged segment (%s) is detected, never served, and the index rebuilt', async (_name, damage) => {
    const items = corpus(120);
    const a = await start(items);
    await a.index.settled();
    const file = join(dir, SEGMENT_FILE);
    const buf = readFileSync(file);
    damage(buf);
    writeFileSync(file, buf);
    const b = await start(items);
    expect(b.loaded()).toBe(false);
    expect(b.lines.some((l) => String(l.msg).startsWith('persisted search segment not used'))).toBe(true);
    await expectServesLike(b.index, await fresh(items));
    // The rebuild writes a good segment over the damaged one.
    await b.index.settled();
    expect((await start(items)).loaded()).toBe(true);
  });

  it.each([1, 7, 100, 4000])('a segment truncated by %i bytes is detected and the index rebuilt', async (cut) => {
    const items = corpus(120);
    const a = await start(items);
    await a.index.settled();
    const file = join(dir, SEGMENT_FILE);
    truncateSync(file, readFileSync(file).length - cut);
    const b = await start(items);
    expect(b.loaded()).toBe(false);
    expect(b.lines.find((l) => String(l.msg).startsWith('persisted search segment not used'))?.reason).toMatch(
      /truncated/,
    );
    await expectServesLike(b.index, await fresh(items));
  });

  it('a segment of another generation of the content (most items different) is not used: the index is rebuilt', async () => {
    const a = await start(corpus(100, 1));
    await a.index.settled();
    const other = corpus(100, 5).map((i) => ({ ...i, updated_at: at(77) }));
    const b = await start(other);
    expect(b.loaded()).toBe(false);
    expect(b.lines.some((l) => String(l.msg).startsWith('persisted search segment is too far behind'))).toBe(true);
    await expectServesLike(b.index, await fresh(other));
  });

  it('a segment made with another analyser or fields (another key) is refused', async () => {
    const c = new CompactIndex(['title', 'tags', 'text']);
    c.load('x', [['a'], [], ['a', 'b']], 1);
    const sealed: { s?: Parameters<typeof encodeSegment>[0] } = {};
    const c2 = new CompactIndex(['title', 'tags', 'text'], { onSealed: (s) => (sealed.s = s) });
    c2.load('x', [['a'], [], ['a', 'b']], 1);
    c2.seal();
    const parts = await encodeSegment(
      sealed.s!,
      { key: 'another analyser', content: contentFingerprint(sealed.s!.fingerprints) },
      yieldToLoop,
    );
    writeFileSync(join(dir, SEGMENT_FILE), Buffer.concat(parts));
    await expect(decodeSegment(Buffer.concat(parts), SEGMENT_KEY, yieldToLoop)).rejects.toThrow(SegmentError);
    const b = await start([item(1, ['alpha'])]);
    expect(b.loaded()).toBe(false);
    expect(b.lines.find((l) => String(l.msg).startsWith('persisted search segment not used'))?.reason).toMatch(
      /another analyser/,
    );
  });

  it.each([
    ['the format before positions (1)', { format: 1 }, /format 1, this version reads 2/],
    [
      'the key before positions (minisearch-index/2)',
      { key: 'minisearch-index/2;fields=title,tags,text;analyzer=1f2e3d4c' },
      /minisearch-index\/2/,
    ],
  ])('a segment of %s is refused and the index rebuilt, never served', async (_name, change, reason) => {
    const items = corpus(60);
    const a = await start(items);
    await a.index.settled();
    const file = join(dir, SEGMENT_FILE);
    const buf = readFileSync(file);
    const magic = buf.subarray(0, 8);
    const { header, bodyStart } = decodeHead(buf, magic, 'segment file', (r) => new Error(r));
    writeFileSync(
      file,
      Buffer.concat([encodeHead(magic, { ...(header as object), ...change }), buf.subarray(bodyStart)]),
    );
    const b = await start(items);
    expect(b.loaded()).toBe(false);
    expect(String(b.lines.find((l) => String(l.msg).startsWith('persisted search segment not used'))?.reason)).toMatch(
      reason,
    );
    await expectServesLike(b.index, await fresh(items));
    // The rebuilt index is persisted in the current format: the next start loads it.
    await b.index.settled();
    expect((await start(items)).loaded()).toBe(true);
  });

  it('round-trips every array of a sealed index through the file bytes', async () => {
    const got: { s?: Parameters<typeof encodeSegment>[0] } = {};
    const c = new CompactIndex(['title', 'text'], { positions: 'text', onSealed: (s) => (got.s = s) });
    c.load(
      'a',
      [
        ['x', 'y'],
        ['x', 'x', 'z'],
      ],
      7,
    );
    c.load('b', [[], ['ünï', 'z']], 0xffffffff);
    c.seal();
    const s = got.s!;
    const bytes = Buffer.concat(
      await encodeSegment(s, { key: 'k', content: contentFingerprint(s.fingerprints) }, yieldToLoop),
    );
    const back = await decodeSegment(bytes, 'k', yieldToLoop);
    expect(back.content).toBe(contentFingerprint(s.fingerprints));
    // The ids compared as lists: a merge's come in chunks, a file's in one array.
    const idsOf = (ids: IdList) => Array.from({ length: ids.length }, (_x, d) => ids.get(d));
    expect({ ...back.sealed, ids: idsOf(back.sealed.ids) }).toEqual({ ...s, ids: idsOf(s.ids) });
  });

  it(
    'property: after random writes, restarts from the segment serve as a fresh build of the content',
    async () => {
      const op = fc.oneof(
        fc.record({
          kind: fc.constant('put' as const),
          id: fc.integer({ min: 0, max: 40 }),
          words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 12 }),
        }),
        fc.record({ kind: fc.constant('persist' as const) }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 40 }), fc.integer({ min: 10, max: 40 }), async (ops, n) => {
          rmSync(dir, { recursive: true, force: true });
          let content = new Map(corpus(n).map((i) => [i.id, i]));
          const a = await start([...content.values()]);
          await a.index.settled();
          let version = 1;
          for (const o of ops) {
            if (o.kind === 'put') {
              const it = item(o.id, o.words, version++);
              content.set(it.id, it);
            } else {
              // Another replica life: start from whatever is persisted, then let it persist.
              const r = await start([...content.values()]);
              await r.index.settled();
            }
          }
          content = new Map([...content.entries()].sort());
          const last = await start([...content.values()]);
          await expectServesLike(last.index, await fresh([...content.values()]));
        }),
        { numRuns: 25 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('writes atomically: a temp file, renamed; nothing else is left in the folder', async () => {
    const { logger } = capture();
    const segments = new SegmentStore({ dir: join(dir, 'nested', 'index'), logger });
    const index = new EmbeddedIndex({ segments });
    started.push({ index, segments });
    await index.replaceAll(corpus(30));
    await index.upsert([item(900, ['late'])]);
    await index.settled();
    expect(readdirSync(join(dir, 'nested', 'index'))).toEqual([SEGMENT_FILE]);
  });

  it('segmentDir: INDEX_DIR wins (off = none); else beside the file store in DATA_DIR; none for Redis and memory stores', () => {
    expect(segmentDir('/idx', '/data', 'kvstore')).toBe('/idx');
    expect(segmentDir('off', '/data', 'file')).toBeUndefined();
    expect(segmentDir(undefined, '/data', 'file')).toBe(join('/data', 'search-index'));
    expect(segmentDir(undefined, '/data', 'kvstore')).toBeUndefined();
    expect(segmentDir(undefined, '/data', 'memory')).toBeUndefined();
  });

  it('a segment prefetched while the content loads is what the next read checks and uses; a missing one reads as none', async () => {
    const items = corpus(50);
    const a = await start(items);
    await a.index.settled();
    const { logger, lines } = capture();
    const segments = new SegmentStore({ dir, logger });
    segments.prefetch();
    const loaded = await segments.read(SEGMENT_KEY);
    expect(loaded?.sealed.ids).toHaveLength(50);
    expect(loaded?.bytes).toBe(readFileSync(join(dir, SEGMENT_FILE)).length);
    // The prefetched bytes are used once: a later read reads the file again (damaged now: refused).
    truncateSync(join(dir, SEGMENT_FILE), 100);
    expect(await segments.read(SEGMENT_KEY)).toBeUndefined();
    rmSync(join(dir, SEGMENT_FILE));
    segments.prefetch();
    expect(await segments.read(SEGMENT_KEY)).toBeUndefined();
    expect(lines.map((l) => String(l.msg))).toEqual([
      expect.stringMatching(/^persisted search segment not used \(truncated/),
      expect.stringMatching(/^no persisted search segment/),
    ]);
  });

  it('after close, takes no more segments; a temp file left by a write cut short is deleted at the next read', async () => {
    const { logger } = capture();
    const segments = new SegmentStore({ dir, logger });
    writeFileSync(join(dir, `${SEGMENT_FILE}.123-abcd.tmp`), 'half a segment');
    expect(await segments.read(SEGMENT_KEY)).toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
    await segments.close();
    const index = new EmbeddedIndex({ segments });
    await index.replaceAll(corpus(10));
    await index.settled();
    expect(readdirSync(dir)).toEqual([]);
  });
});
