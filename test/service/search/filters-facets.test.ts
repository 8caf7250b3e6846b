import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Item, ItemType } from '../../../service/content/item';
import type { FacetName, ItemFilter } from '../../../service/content/item-filter';
import type { SearchSort } from '../../../service/http/contract/search';
import { EmbeddedIndex, type EmbeddedIndexOptions } from '../../../service/search/embedded-index';
import { SegmentStore } from '../../../service/search/index/segment-store';
import { capture } from '../../helpers/log-capture';
import type { IndexPage, IndexQuery } from '../../../service/search/search-index';
import { ExhaustiveIndex } from '../../../tools/oracles/exhaustive-index';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

/*
 * Filters, sorts, facets and searches without words (issue 40): the pruned search against the
 * exhaustive oracle (tools/oracles/exhaustive-index.ts, which judges filters with `matches` on
 * the items themselves), on known items and on random corpora with writes, deletes and merges.
 */

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'photon', 'proton', 'laser', 'beam', 'kappa', 'sigma'];
const TYPES: readonly ItemType[] = ['article', 'project', 'experience'];
const TAGS = ['x', 'y', 'K8s', 'go'];
const DAYS = ['2021-03-01', '2023-01-01', '2023-06-15', '2024-02-29'];
const STAMPS = ['2024-01-01T00:00:00.000Z', '2025-05-05T10:00:00.000Z', '2026-01-01T00:00:00.000Z'];

/**
 * Pages agree: total, facets, and ids in order, where relevance scores tied within 1e-9 may swap
 * (their order is the pruned scorer's floating-point sum against the oracle's).
 */
function expectSame(pruned: IndexPage, full: IndexPage, label: string): void {
  expect({ label, total: pruned.total, facets: pruned.facets }).toEqual({
    label,
    total: full.total,
    facets: full.facets,
  });
  expect(pruned.hits.length).toBe(full.hits.length);
  const wrong: string[] = [];
  pruned.hits.forEach((h, i) => {
    const f = full.hits;
    if (!(Math.abs(h.score - f[i].score) <= 1e-9)) wrong.push(`#${i}: score ${h.score} where ${f[i].score}`);
    if (h.id === f[i].id) return;
    let tied = 0;
    for (let j = i; j >= 0 && Math.abs(f[j].score - h.score) <= 1e-9; j--) tied += 1;
    for (let j = i + 1; j < f.length && Math.abs(f[j].score - h.score) <= 1e-9; j++) tied += 1;
    if (tied <= 1 || h.score === 0) wrong.push(`#${i}: ${h.id} where ${f[i].id} (score ${h.score})`);
  });
  expect({ label, wrong }).toEqual({ label, wrong: [] });
}

const itemArb = fc.record({
  words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 20 }),
  type: fc.constantFrom(...TYPES),
  tags: fc.subarray(TAGS),
  date: fc.option(fc.constantFrom(...DAYS, '2023-06-15T23:30:00+05:00'), { nil: undefined }),
  created: fc.constantFrom(...STAMPS),
  updated: fc.constantFrom(...STAMPS),
});
type Drawn = typeof itemArb extends fc.Arbitrary<infer T> ? T : never;
const toItem = (d: Drawn, id: string): Item => ({
  id,
  type: d.type,
  title: d.words.slice(0, 2).join(' '),
  body: d.words.join(' '),
  tags: d.tags,
  ...(d.date ? { date: d.date } : {}),
  created_at: d.created,
  updated_at: d.updated,
});

const filterArb: fc.Arbitrary<ItemFilter> = fc
  .record({
    type: fc.option(fc.subarray([...TYPES], { minLength: 1 }), { nil: undefined }),
    tag: fc.option(fc.subarray(['x', 'Y', 'k8s', 'nosuch'], { minLength: 1 }), { nil: undefined }),
    date_from: fc.option(fc.constantFrom(...DAYS, '2022-12-31'), { nil: undefined }),
    date_to: fc.option(fc.constantFrom(...DAYS, '2023-06-14'), { nil: undefined }),
  })
  .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as ItemFilter);

const queryArb: fc.Arbitrary<IndexQuery> = fc.record({
  text: fc.oneof(
    fc.constant(''),
    fc.array(fc.constantFrom(...WORDS, 'phot', 'las'), { minLength: 1, maxLength: 6 }).map((w) => w.join(' ')),
  ),
  filter: filterArb,
  sort: fc.option(fc.constantFrom<SearchSort>('relevance', 'date:desc', 'date:asc', 'updated:desc'), {
    nil: undefined,
  }),
  facets: fc.subarray<FacetName>(['type', 'tag']),
  facetLimit: fc.integer({ min: 1, max: 5 }),
  limit: fc.integer({ min: 1, max: 12 }),
  offset: fc.integer({ min: 0, max: 10 }),
  snippets: fc.constant(false),
});

describe('filters, sorts and facets: pruned against the exhaustive oracle', () => {
  it.each([
    ['default ranking', {}],
    [
      'RM3 on small corpora, merges after a few writes',
      {
        minMergeDocs: 3,
        expansion: { enabled: true, fbDocs: 3, fbTerms: 5, originalWeight: 0.5, minDocs: 1 },
      },
    ],
  ] as Array<[string, EmbeddedIndexOptions]>)(
    'gives the same pages, totals and facets for random filters, sorts and queries (%s)',
    async (_name, opts) => {
      const property = fc.asyncProperty(
        fc.array(itemArb, { minLength: 1, maxLength: 50 }),
        fc.array(itemArb, { maxLength: 10 }),
        fc.array(fc.nat(60), { maxLength: 5 }),
        fc.array(queryArb, { minLength: 1, maxLength: 6 }),
        async (first, later, removed, queries) => {
          const index = new ExhaustiveIndex(opts);
          await index.replaceAll(first.map((d, n) => toItem(d, `d${n}`)));
          // Writes after the build: replaced items (new short ids, the old ones deleted), new ones, removals.
          await index.upsert(later.map((d, n) => toItem(d, `d${(n * 7) % (first.length + 5)}`)));
          await index.remove(removed.map((n) => `d${n}`));
          for (const q of queries) {
            const label = JSON.stringify(q);
            expectSame(await index.search(q), index.exhaustive(q), label);
          }
          await index.pruned.settled();
          const q = queries[0];
          expectSame(await index.search(q), index.exhaustive(q), `after merges: ${JSON.stringify(q)}`);
        },
      );
      await fc.assert(property, { numRuns: 60 });
    },
    // A hang guard only: the property is bounded by numRuns and the sizes drawn (test/helpers/property.ts).
    PROPERTY_HANG_GUARD_MS,
  );
});

describe("RM3's feedback taken before the filter (issue 40)", () => {
  const rm3: EmbeddedIndexOptions = {
    expansion: { enabled: true, fbDocs: 3, fbTerms: 5, originalWeight: 0.5, minDocs: 1 },
  };
  it("gives a long query filtered by a tag or a type the total that the query's facet gave for it", async () => {
    const property = fc.asyncProperty(
      fc.array(itemArb, { minLength: 3, maxLength: 50 }),
      fc.array(fc.constantFrom(...WORDS), { minLength: 3, maxLength: 6 }),
      async (drawn, words) => {
        const index = new ExhaustiveIndex(rm3);
        await index.replaceAll(drawn.map((d, n) => toItem(d, `d${n}`)));
        const text = words.join(' ');
        const ask = (filter: ItemFilter) =>
          index.search({ text, filter, facets: ['type', 'tag'], facetLimit: 10, limit: 5, offset: 0, snippets: false });
        const all = await ask({});
        for (const [tag, n] of Object.entries(all.facets!.tag!))
          expect({ tag, total: (await ask({ tag: [tag] })).total }).toEqual({ tag, total: n });
        for (const [type, n] of Object.entries(all.facets!.type!))
          expect({ type, total: (await ask({ type: [type as ItemType] })).total }).toEqual({ type, total: n });
      },
    );
    await fc.assert(property, { numRuns: 60 });
  });

  it("does not take a tag filter's words into the query", async () => {
    const index = new ExhaustiveIndex(rm3);
    const item = (n: number, title: string, body: string, tags: string[]): Item => ({
      id: `i${n}`,
      type: 'article',
      title,
      body,
      tags,
      created_at: '2024-01-01T00:00:00.000Z',
      updated_at: '2024-01-01T00:00:00.000Z',
    });
    // The best matches (the feedback) are untagged; two weak matches and six others are tagged go.
    const items: Item[] = [
      ...[0, 1, 2, 3].map((n) => item(n, 'alpha beta gamma', 'alpha beta gamma delta', [])),
      ...[4, 5].map((n) => item(n, 'laser', 'alpha kappa sigma laser', ['go'])),
      ...[6, 7, 8, 9, 10, 11].map((n) => item(n, 'photon', 'photon proton beam', ['go'])),
    ];
    await index.replaceAll(items);
    const q = (filter: ItemFilter) => ({ text: 'alpha beta gamma', filter, limit: 20, offset: 0, snippets: false });
    const tagged = await index.search(q({ tag: ['go'] }));
    // The matches tagged go; with the feedback taken under the filter, its "go" matched all eight.
    expect(tagged.hits.map((h) => h.id).sort()).toEqual(['i4', 'i5']);
    expect(tagged.total).toBe(2);
    expectSame(tagged, index.exhaustive(q({ tag: ['go'] })), 'tag go');
  });
});

describe('filters, sorts and facets on known items', () => {
  const at = (day: string) => `${day}T12:00:00.000Z`;
  const item = (id: string, type: ItemType, tags: string[], date: string, body: string, updated = date): Item => ({
    id,
    type,
    title: id,
    body,
    tags,
    date,
    created_at: at('2020-01-01'),
    updated_at: at(updated),
  });
  const ITEMS: Item[] = [
    item('a1', 'article', ['kubernetes', 'go'], '2023-01-10', 'clusters and pods'),
    item('a2', 'article', ['kubernetes'], '2023-05-01', 'pods scheduling'),
    item('a3', 'article', ['rust'], '2024-02-29', 'ownership and borrowing', '2026-01-01'),
    item('a4', 'article', [], '2022-12-31', 'notes on nothing'),
    item('p1', 'project', ['Kubernetes', 'helm'], '2023-05-01', 'a helm chart for pods'),
    item('p2', 'project', ['go'], '2021-07-07', 'a small go tool'),
    item('e1', 'experience', ['kubernetes'], '2024-01-01', 'ran clusters at scale'),
  ];
  let index: ExhaustiveIndex;
  beforeAll(async () => {
    index = new ExhaustiveIndex();
    await index.replaceAll(ITEMS);
  });
  const browse = (q: Partial<IndexQuery>) => index.search({ text: '', limit: 100, offset: 0, snippets: false, ...q });
  const ids = async (q: Partial<IndexQuery>) => (await browse(q)).hits.map((h) => h.id);

  it('counts exactly what each filter keeps, with no words (a placeholder search)', async () => {
    const cases: Array<[ItemFilter, number]> = [
      [{}, 7],
      [{ type: ['article'] }, 4],
      [{ type: ['article', 'project'] }, 6],
      [{ tag: ['kubernetes'] }, 4],
      [{ tag: ['KUBERNETES', 'go'] }, 5],
      [{ tag: ['nosuch'] }, 0],
      [{ date_from: '2023-05-01' }, 4],
      [{ date_to: '2023-05-01' }, 5],
      [{ date_from: '2023-05-01', date_to: '2023-05-01' }, 2],
      [{ type: ['article'], tag: ['kubernetes'], date_from: '2023-02-01' }, 1],
    ];
    for (const [filter, total] of cases) {
      const page = await browse({ filter });
      expect({ filter, total: page.total, hits: page.hits.length }).toEqual({ filter, total, hits: total });
      expect(index.exhaustive({ text: '', filter, limit: 100, offset: 0 }).total).toBe(total);
    }
  });

  it('browses newest first by default, ties by id; oldest first; by update time', async () => {
    expect(await ids({})).toEqual(['a3', 'e1', 'a2', 'p1', 'a1', 'a4', 'p2']);
    expect(await ids({ sort: 'relevance' })).toEqual(['a3', 'e1', 'a2', 'p1', 'a1', 'a4', 'p2']);
    expect(await ids({ sort: 'date:asc' })).toEqual(['p2', 'a4', 'a1', 'a2', 'p1', 'e1', 'a3']);
    expect(await ids({ sort: 'updated:desc' })).toEqual(['a3', 'e1', 'a2', 'p1', 'a1', 'a4', 'p2']);
    expect(await ids({ sort: 'date:desc', offset: 2, limit: 2 })).toEqual(['a2', 'p1']);
  });

  it('counts facets disjunctively: each facet applies every filter but its own', async () => {
    const page = await browse({ filter: { type: ['article'], tag: ['kubernetes'] }, facets: ['type', 'tag'] });
    expect(page.total).toBe(2);
    // type: items tagged kubernetes, of any type; tag: articles, any tag.
    expect(page.facets).toEqual({
      type: { article: 2, project: 1, experience: 1 },
      tag: { kubernetes: 2, go: 1, rust: 1 },
    });
    // Tags most frequent first, ties by name, at most facetLimit.
    const all = await browse({ facets: ['tag'], facetLimit: 2 });
    expect(Object.entries(all.facets!.tag!)).toEqual([
      ['kubernetes', 4],
      ['go', 2],
    ]);
  });

  it('filters and sorts a search with words; its type facet sums to the unfiltered total', async () => {
    const q = { text: 'pods clusters', limit: 10, offset: 0, snippets: false } as const;
    const plain = await index.search({ ...q, facets: ['type'] });
    expect(plain.total).toBe(4);
    expect(Object.values(plain.facets!.type!).reduce((a, b) => a + b, 0)).toBe(plain.total);
    for (const type of TYPES) {
      expect((await index.search({ ...q, filter: { type: [type] } })).total).toBe(plain.facets!.type![type]);
    }
    const byDate = await index.search({ ...q, sort: 'date:asc' });
    expect(byDate.hits.map((h) => h.id)).toEqual(['a1', 'a2', 'p1', 'e1']);
    expect(byDate.hits.every((h) => h.score === 0)).toBe(true);
  });
});

describe('browse structures prepared in the background (issue 40)', () => {
  // Known draws: 300 items, then replacements (new short ids, the old deleted), new items, removals.
  const drawn = fc.sample(itemArb, { numRuns: 330, seed: 40 });
  const first = drawn.slice(0, 300).map((d, n) => toItem(d, `d${n}`));
  const later = drawn.slice(300).map((d, n) => toItem(d, `d${n * 11}`));
  const browses: IndexQuery[] = (
    [
      { text: '', limit: 7, offset: 0 },
      { text: '', limit: 7, offset: 40, filter: { type: ['project'] } },
      { text: '', limit: 5, offset: 3, sort: 'updated:desc' },
      { text: '', limit: 5, offset: 0, sort: 'date:asc', facets: ['type', 'tag'] },
      { text: 'alpha beta', limit: 5, offset: 0, sort: 'date:desc', facets: ['tag'] },
    ] as IndexQuery[]
  ).map((q) => ({ ...q, snippets: false }));
  const agree = async (index: ExhaustiveIndex, when: string) => {
    for (const q of browses) expectSame(await index.search(q), index.exhaustive(q), `${when}: ${JSON.stringify(q)}`);
  };

  it('are prepared when replaceAll settles, and again once writes, deletes and a renumbering merge settle', async () => {
    const index = new ExhaustiveIndex({ minMergeDocs: 3 });
    await index.replaceAll(first);
    expect(index.pruned.browsePrepared).toBe(true);
    await agree(index, 'after the build');
    await index.upsert(later);
    await index.remove(['d1', 'd2', 'd3', 'd250']);
    await index.pruned.settled();
    expect(index.pruned.browsePrepared).toBe(true);
    await agree(index, 'after writes');
    await index.remove(['d4', 'd5']);
    await index.pruned.checkpoint();
    await index.pruned.settled();
    expect(index.pruned.browsePrepared).toBe(true);
    await agree(index, 'after a merge');
  });

  it('answers queries that come while the preparation is under way, a step a slice', async () => {
    // Slices of 0 ms: the preparation holds the gate one step at a time, the queries go between.
    const index = new ExhaustiveIndex({ minMergeDocs: 3, querySliceMs: 0 });
    await index.replaceAll(first);
    await index.upsert(later);
    await index.remove(['d7', 'd8']);
    expect(index.pruned.browsePrepared).toBe(false);
    const preparing = index.pruned.prepareBrowse();
    const pages = await Promise.all(browses.map((q) => index.search(q)));
    await preparing;
    expect(index.pruned.browsePrepared).toBe(true);
    browses.forEach((q, i) => expectSame(pages[i], index.exhaustive(q), `meanwhile: ${JSON.stringify(q)}`));
    await agree(index, 'after');
  });
});

/**
 * `items` with their type, tags and dates behind getters that count their reads: the browse
 * structures' builds after indexing read the attributes entered then, not the items.
 */
function counted(items: readonly Item[]): { items: Item[]; reads: () => number } {
  let reads = 0;
  const out = items.map((it) => {
    const o: Item = { ...it };
    for (const k of ['type', 'tags', 'date', 'created_at', 'updated_at'] as const) {
      const v = it[k];
      if (v === undefined) continue;
      Object.defineProperty(o, k, {
        get: () => {
          reads += 1;
          return v;
        },
        enumerable: true,
      });
    }
    return o;
  });
  return { items: out, reads: () => reads };
}

describe("the documents' attributes, entered by slot when indexed (issue 40)", () => {
  const drawn = fc.sample(itemArb, { numRuns: 360, seed: 42 });
  const first = drawn.slice(0, 300).map((d, n) => toItem(d, `d${n}`));
  const browses: IndexQuery[] = (
    [
      { text: '', limit: 50, offset: 0 },
      { text: '', limit: 9, offset: 20, filter: { type: ['project'], tag: ['x'] } },
      { text: '', limit: 9, offset: 3, sort: 'updated:desc', facets: ['type', 'tag'] },
      { text: '', limit: 9, offset: 0, sort: 'date:asc', filter: { date_from: '2023-01-01' }, facets: ['tag'] },
      { text: 'alpha beta', limit: 9, offset: 0, sort: 'updated:desc', filter: { tag: ['k8s', 'go'] } },
    ] as IndexQuery[]
  ).map((q) => ({ ...q, snippets: false }));
  const agree = async (index: ExhaustiveIndex, when: string) => {
    for (const q of browses) expectSame(await index.search(q), index.exhaustive(q), `${when}: ${JSON.stringify(q)}`);
  };
  /**
   * A merge that renumbers the short ids (a checkpoint), then the browse structures prepared again:
   * they read none of the items (`reads`; the oracle reads them, after), and the browses still agree.
   */
  const mergedReadingNoItem = async (index: ExhaustiveIndex, reads: () => number) => {
    const before = reads();
    await index.pruned.checkpoint();
    await index.pruned.settled();
    expect(index.pruned.browsePrepared).toBe(true);
    expect(reads() - before).toBe(0);
    await agree(index, 'after the merge');
  };

  it('browses right after deletes whose slots new documents take, and after the merge that renumbers them, reading no item', async () => {
    const { items, reads } = counted(first);
    const index = new ExhaustiveIndex({ minMergeDocs: 3 });
    await index.replaceAll(items);
    await agree(index, 'after the build');
    // Deleted, then new documents (they take the freed slots, the deleted short ids stay until a
    // merge) and replacements (a new short id, the old one deleted), browsed before any merge.
    await index.remove(['d0', 'd10', 'd11', 'd150', 'd299']);
    await agree(index, 'after the deletes');
    const fresh = drawn.slice(300, 330).map((d, n) => toItem(d, `n${n}`));
    const replaced = drawn.slice(330).map((d, n) => toItem(d, `d${20 + n * 9}`));
    await index.upsert([...fresh, ...replaced]);
    await agree(index, 'after the writes');
    // The columns built again for the new numbering read none of the items.
    await mergedReadingNoItem(index, reads);
  });

  it("enters a restored document's attributes at their first read, and keeps them through writes and merges", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attributes-restore-'));
    try {
      const built = new SegmentStore({ dir, logger: capture().logger });
      const writer = new EmbeddedIndex({ segments: built });
      await writer.replaceAll(first);
      await writer.settled();
      await built.close();
      // A few items changed since the segment was written (re-indexed at the restore), the rest as they were.
      const changed = first.map((it, n) => (n % 50 === 7 ? { ...it, tags: ['go'], body: `${it.body} sigma` } : it));
      const { items, reads } = counted(changed);
      const segments = new SegmentStore({ dir, logger: capture().logger });
      const index = new ExhaustiveIndex({ segments, minMergeDocs: 3 });
      await index.replaceAll(items);
      expect(index.pruned.startedFrom).toEqual({ from: 'segment', documents: 300, reindexed: 6 });
      await agree(index, 'after the restore');
      await index.pruned.settled();
      await index.remove(['d1', 'd2', 'd57']);
      await index.upsert(drawn.slice(300, 320).map((d, n) => toItem(d, `n${n}`)));
      await agree(index, 'after writes');
      await mergedReadingNoItem(index, reads);
      await segments.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('browse structures after a restore from the persisted segment (issue 40)', () => {
  it('are prepared in the background after the restore settles, not before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'browse-prepare-'));
    const items = fc.sample(itemArb, { numRuns: 200, seed: 41 }).map((d, n) => toItem(d, `d${n}`));
    try {
      const first = new SegmentStore({ dir, logger: capture().logger });
      const built = new EmbeddedIndex({ segments: first });
      await built.replaceAll(items);
      await built.settled();
      await first.close();
      const segments = new SegmentStore({ dir, logger: capture().logger });
      const restored = new EmbeddedIndex({ segments });
      await restored.replaceAll(items);
      expect(restored.startedFrom?.from).toBe('segment');
      // A start from the segment is ready before its browse structures are (they follow in slices).
      expect(restored.browsePrepared).toBe(false);
      await restored.settled();
      expect(restored.browsePrepared).toBe(true);
      const page = await restored.search({ text: '', limit: 5, offset: 0, snippets: false, sort: 'updated:desc' });
      const fresh = new EmbeddedIndex();
      await fresh.replaceAll(items);
      expect(page).toEqual(
        await fresh.search({ text: '', limit: 5, offset: 0, snippets: false, sort: 'updated:desc' }),
      );
      await segments.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
