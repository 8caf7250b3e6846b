import fc from 'fast-check';
import type { Item } from '../../../service/content/item';
import { EmbeddedIndex } from '../../../service/search/embedded-index';
import { ExhaustiveIndex } from '../../../tools/oracles/exhaustive-index';
import type { IndexQuery } from '../../../service/search/search-index';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

const at = '2026-01-01T00:00:00.000Z';
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'theta', 'kappa', 'photon', 'proton', 'neutron'];
const item = (id: number, words: readonly string[]): Item => ({
  id: `d${id}`,
  type: 'article',
  title: words.slice(0, 2).join(' '),
  body: words.join(' '),
  tags: [],
  created_at: at,
  updated_at: at,
});

type Op = { kind: 'upsert'; id: number; words: string[] } | { kind: 'remove'; id: number };

describe('incremental updates', () => {
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      kind: fc.constant('upsert' as const),
      id: fc.integer({ min: 0, max: 30 }),
      words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 20 }),
    }),
    fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 30 }) }),
  );

  it(
    'ingest, update and delete without a rebuild rank as an index rebuilt from the final items',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(op, { minLength: 1, maxLength: 60 }),
          fc.array(fc.constantFrom(...WORDS, 'phot', 'neutr'), { minLength: 1, maxLength: 6 }),
          async (ops, words) => {
            // Merges every few writes, in the background: searches meet the base, appended segments,
            // tombstones and merges under way.
            const live = new ExhaustiveIndex({
              coordination: true,
              expansion: { enabled: true, fbDocs: 3, fbTerms: 5, originalWeight: 0.5, minDocs: 1 },
              minMergeDocs: 3,
            });
            const final = new Map<string, Item>();
            for (const o of ops) {
              if (o.kind === 'upsert') {
                const it = item(o.id, o.words);
                await live.upsert([it]);
                final.set(it.id, it);
              } else {
                await live.remove([`d${o.id}`]);
                final.delete(`d${o.id}`);
              }
              // The pruned page (postings from the base runs and the appended segments) is the exhaustive one.
              const q: IndexQuery = { text: words.join(' '), limit: 5, offset: 0, snippets: false };
              const pruned = await live.search(q);
              const full = live.exhaustive(q);
              expect(pruned.total).toBe(full.total);
              expect(pruned.hits.map((h) => h.score)).toEqual(full.hits.map((h) => h.score));
            }
            const rebuilt = new EmbeddedIndex(live.ranking);
            await rebuilt.replaceAll([...final.values()]);
            expect(live.size()).toBe(rebuilt.size());
            for (const text of [words.join(' '), words.slice(0, 2).join(' ')]) {
              const q: IndexQuery = { text, limit: 10, offset: 0, snippets: false };
              // To the last bit: length averages are exact sums over the live documents (issue 39).
              expect(await live.search(q)).toEqual(await rebuilt.search(q));
            }
          },
        ),
        { numRuns: 80 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('answers a query from the state it started in, though it yields between slices while writes and merges wait', async () => {
    // Yields at every step, windows of a few postings, a merge every few writes.
    const live = new ExhaustiveIndex({
      querySliceMs: 0,
      windowPostings: 4,
      minMergeDocs: 3,
      expansion: { enabled: true, fbDocs: 3, fbTerms: 5, originalWeight: 0.5, minDocs: 1 },
    });
    await live.upsert(
      Array.from({ length: 24 }, (_, i) =>
        item(i, [WORDS[i % 11], WORDS[(i * 3) % 11], WORDS[(i * 7) % 11], 'photon']),
      ),
    );
    const q: IndexQuery = { text: 'alpha gamma photon kappa', limit: 5, offset: 0, snippets: false };
    for (let round = 0; round < 6; round++) {
      const before = live.exhaustive(q);
      const done: string[] = [];
      const during = live.search(q).then((page) => (done.push('query'), page));
      const writes = Promise.all([
        live.upsert([item(100 + round, ['alpha', 'photon', 'photon']), item(round, ['gamma'])]),
        live.remove([`d${12 + round}`]),
      ]).then(() => done.push('writes'));
      const [page] = await Promise.all([during, writes]);
      expect(done).toEqual(['query', 'writes']);
      expect(page).toEqual(before);
      expect(await live.search(q)).toEqual(live.exhaustive(q));
    }
  });

  it('answers a filtered, faceted RM3 query from the state it started in, though writes land between its passes', async () => {
    // Yields at every step (the filter's bitmaps, the feedback pass, the expansion, the expanded
    // pass's windows, the page), windows of a few postings, a merge every few writes.
    const live = new ExhaustiveIndex({
      querySliceMs: 0,
      windowPostings: 4,
      minMergeDocs: 3,
      expansion: { enabled: true, fbDocs: 3, fbTerms: 5, originalWeight: 0.5, minDocs: 1 },
    });
    const tagged = (i: number, words: readonly string[]): Item => ({
      ...item(i, words),
      type: i % 3 === 0 ? 'project' : 'article',
      tags: i % 2 === 0 ? ['even'] : ['odd'],
    });
    await live.upsert(
      Array.from({ length: 30 }, (_, i) =>
        tagged(i, [WORDS[i % 11], WORDS[(i * 3) % 11], WORDS[(i * 7) % 11], 'photon']),
      ),
    );
    const q: IndexQuery = {
      text: 'alpha gamma photon kappa',
      filter: { tag: ['even'] },
      facets: ['type', 'tag'],
      limit: 5,
      offset: 0,
      snippets: true,
    };
    for (let round = 0; round < 6; round++) {
      const before = live.exhaustive(q);
      const done: string[] = [];
      const during = live.search(q).then((page) => (done.push('query'), page));
      // Started after the query, while its first slice waits for a turn: they wait for its end.
      const writes = Promise.all([
        live.upsert([tagged(100 + round * 2, ['alpha', 'photon', 'photon']), tagged(round * 2, ['gamma'])]),
        live.remove([`d${12 + round * 2}`]),
      ]).then(() => done.push('writes'));
      const [page] = await Promise.all([during, writes]);
      expect(done).toEqual(['query', 'writes']);
      expect(page).toEqual(before);
      expect(await live.search(q)).toEqual(live.exhaustive(q));
    }
  });

  it('removes many items in slices: a query is answered between them, from one state, and the rest rank as built', async () => {
    // A slice of 0 ms: the remove yields after every item, whatever the machine's speed.
    const live = new ExhaustiveIndex({ indexSliceMs: 0, minMergeDocs: 16 });
    const items = Array.from({ length: 300 }, (_, i) => item(i, [WORDS[i % 11], WORDS[(i * 7) % 11], 'photon']));
    await live.upsert(items);
    const q: IndexQuery = { text: 'photon alpha', limit: 5, offset: 0, snippets: true };
    const done: string[] = [];
    const gone = items.slice(0, 200).map((i) => i.id);
    const removing = live.remove(gone).then(() => done.push('remove'));
    // Some turns of the event loop: the remove is under way (an item a turn), not done.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    const during = await live.search(q);
    done.push('query');
    await removing;
    // Before issue 39 the remove ran in one synchronous loop: the query came after it.
    expect(done).toEqual(['query', 'remove']);
    expect(during.total).toBeGreaterThan(100);
    expect(during.total).toBeLessThan(300);
    const rebuilt = new EmbeddedIndex(live.ranking);
    await rebuilt.replaceAll(items.slice(200));
    expect(await live.search(q)).toEqual(await rebuilt.search(q));
  });

  it('forgets a removed item at once, and ignores unknown ids', async () => {
    const idx = new EmbeddedIndex();
    await idx.replaceAll([item(1, ['photon', 'beam']), item(2, ['photon'])]);
    await idx.remove(['d1', 'nope']);
    const page = await idx.search({ text: 'photon beam', limit: 10, offset: 0, snippets: false });
    expect(page.hits.map((h) => h.id)).toEqual(['d2']);
    expect(idx.size()).toBe(1);
  });
});
