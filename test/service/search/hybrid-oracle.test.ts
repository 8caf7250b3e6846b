import fc from 'fast-check';
import type { Item, ItemType } from '../../../service/content/item';
import type { FacetName, ItemFilter } from '../../../service/content/item-filter';
import type { SearchSort } from '../../../service/http/contract/search';
import type { EmbeddedIndexOptions } from '../../../service/search/embedded-index';
import { meaningPage, type MeaningPage, type MeaningQuery } from '../../../service/search/hybrid-search';
import type { Scored } from '../../../service/search/scoring/top-hits';
import { ExhaustiveIndex } from '../../../tools/oracles/exhaustive-index';
import { exhaustiveMeaningPage } from '../../../tools/oracles/exhaustive-hybrid';
import { exhaustiveVectorSearch } from '../../../tools/oracles/exhaustive-vectors';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

/*
 * Search by meaning's pages (issue 41): the pruned path (meaningPage over the embedded index,
 * which counts the semantic candidates that match no word with `IndexQuery.also`) against the
 * exhaustive reference written from the definition (tools/oracles/exhaustive-hybrid.ts), on
 * random corpora, filters, sorts, facets, ratios and fusions.
 */

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'photon', 'proton', 'laser', 'beam', 'kappa', 'sigma'];
const TYPES: readonly ItemType[] = ['article', 'project', 'experience'];
const TAGS = ['x', 'y', 'K8s', 'go'];
const DAYS = ['2021-03-01', '2023-01-01', '2023-06-15', '2024-02-29'];
const STAMPS = ['2024-01-01T00:00:00.000Z', '2025-05-05T10:00:00.000Z', '2026-01-01T00:00:00.000Z'];

const itemArb = fc.record({
  words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 12 }),
  type: fc.constantFrom(...TYPES),
  tags: fc.subarray(TAGS),
  date: fc.option(fc.constantFrom(...DAYS), { nil: undefined }),
  created: fc.constantFrom(...STAMPS),
  updated: fc.constantFrom(...STAMPS),
  vector: fc.array(fc.integer({ min: -8, max: 8 }), { minLength: 3, maxLength: 3 }),
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
  })
  .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as ItemFilter);

const queryArb = fc.record({
  mode: fc.constantFrom('semantic' as const, 'hybrid' as const),
  words: fc.array(fc.constantFrom(...WORDS, 'phot', 'nosuchword'), { minLength: 1, maxLength: 5 }),
  vector: fc.array(fc.integer({ min: -8, max: 8 }), { minLength: 3, maxLength: 3 }),
  filter: filterArb,
  sort: fc.option(fc.constantFrom<SearchSort>('relevance', 'date:desc', 'date:asc', 'updated:desc'), {
    nil: undefined,
  }),
  facets: fc.subarray<FacetName>(['type', 'tag']),
  facetLimit: fc.integer({ min: 1, max: 5 }),
  limit: fc.integer({ min: 1, max: 12 }),
  offset: fc.integer({ min: 0, max: 10 }),
  ratio: fc.constantFrom(0, 0.25, 0.5, 1),
  fusion: fc.constantFrom('rrf' as const, 'normalized' as const),
  candidates: fc.integer({ min: 1, max: 15 }),
});

/**
 * Pages agree: total and facets exactly; ids and scores in order, but for keyword results whose
 * keyword scores tie within 1e-9 (the pruned scorer's floating-point sum against the oracle's
 * may order them either way, and with them their fused ranks).
 */
function expectSame(pruned: MeaningPage, full: MeaningPage & { keyword: Scored[] }, label: string): void {
  expect({ label, total: pruned.total, facets: pruned.facets }).toEqual({
    label,
    total: full.total,
    facets: full.facets,
  });
  expect({ label, n: pruned.hits.length }).toEqual({ label, n: full.hits.length });
  const kw = new Map(full.keyword.map((h) => [h.id, h.score]));
  const tied = (id: string) => {
    const s = kw.get(id);
    return s !== undefined && full.keyword.some((h) => h.id !== id && Math.abs(h.score - s) <= 1e-9);
  };
  const wrong: string[] = [];
  pruned.hits.forEach((h, i) => {
    const f = full.hits[i];
    if (h.id !== f.id && !(tied(h.id) && tied(f.id))) wrong.push(`#${i}: ${h.id} where ${f.id}`);
    else if (h.id === f.id && Math.abs(h.score - f.score) > 1e-9 && !tied(h.id))
      wrong.push(`#${i}: ${h.id} scored ${h.score} where ${f.score}`);
  });
  expect({ label, wrong }).toEqual({ label, wrong: [] });
}

describe('search by meaning: pruned pages against the exhaustive reference', () => {
  it.each([
    ['default ranking', {}],
    [
      'RM3 on small corpora, merges after a few writes',
      { minMergeDocs: 3, expansion: { enabled: true, fbDocs: 3, fbTerms: 5, originalWeight: 0.5, minDocs: 1 } },
    ],
  ] as Array<[string, EmbeddedIndexOptions]>)(
    'gives the same pages, totals and facets for random corpora, filters, sorts, ratios and fusions (%s)',
    async (_name, opts) => {
      const property = fc.asyncProperty(
        fc.array(itemArb, { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(45), { maxLength: 4 }),
        fc.array(queryArb, { minLength: 1, maxLength: 5 }),
        async (drawn, removed, queries) => {
          const index = new ExhaustiveIndex(opts);
          await index.replaceAll(drawn.map((d, n) => toItem(d, `d${n}`)));
          await index.remove(removed.map((n) => `d${n}`));
          const gone = new Set(removed.map((n) => `d${n}`));
          const vectors = new Map(
            drawn.flatMap((d, n) => (gone.has(`d${n}`) ? [] : [[`d${n}`, [d.vector.map((x) => x + 0.5)]] as const])),
          );
          for (const d of queries) {
            const nearest = exhaustiveVectorSearch(
              vectors,
              d.vector.map((x) => x + 0.25),
              d.candidates,
            ).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
            const q: MeaningQuery = {
              mode: d.mode,
              text: d.words.join(' '),
              filter: d.filter,
              sort: d.sort,
              facets: d.facets,
              facetLimit: d.facetLimit,
              limit: d.limit,
              offset: d.offset,
              nearest,
              ratio: d.ratio,
              fusion: d.fusion,
              candidates: d.candidates,
            };
            const label = JSON.stringify({ ...d, nearest: nearest.map((h) => h.id) });
            const pruned = await meaningPage(
              { search: (x) => index.search(x), sorted: (ids, sort) => index.pruned.sorted(ids, sort) },
              q,
            );
            expectSame(pruned, exhaustiveMeaningPage(index, q), label);
          }
        },
      );
      await fc.assert(property, { numRuns: 60 });
    },
    // A hang guard only: the property is bounded by numRuns and the sizes drawn (test/helpers/property.ts).
    PROPERTY_HANG_GUARD_MS,
  );
});
