import { existsSync } from 'node:fs';
import fc from 'fast-check';
import { twoWordQueries } from '../../../../tools/corpus/grow-corpus';
import { loadVaswani, vaswaniDir } from '../../../../tools/corpus/vaswani';
import type { Item } from '../../../../service/content/item';
import { EmbeddedIndex, type EmbeddedIndexOptions } from '../../../../service/search/embedded-index';
import type { IndexHit, IndexQuery } from '../../../../service/search/search-index';
import { ExhaustiveIndex } from '../../../../tools/oracles/exhaustive-index';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

const at = '2026-01-01T00:00:00.000Z';
const WORDS = [
  'alpha',
  'beta',
  'gamma',
  'delta',
  'epsilon',
  'zeta',
  'theta',
  'kappa',
  'lambda',
  'sigma',
  'omega',
  'photon',
  'proton',
  'neutron',
];

/**
 * Pruned and exhaustive pages agree: ids where scores differ by more than 1e-9, scores everywhere.
 * Checked in plain code and asserted once per page (a page of 1,000 hits would otherwise cost
 * thousands of `expect` calls and a quadratic search for ties).
 */
function expectSamePage(
  pruned: { total: number; hits: readonly IndexHit[] },
  full: { total: number; hits: readonly IndexHit[] },
): void {
  expect(pruned.total).toBe(full.total);
  expect(pruned.hits.length).toBe(full.hits.length);
  const wrong: string[] = [];
  const f = full.hits;
  pruned.hits.forEach((h, i) => {
    if (!(Math.abs(h.score - f[i].score) <= 1e-9)) wrong.push(`#${i}: score ${h.score} where ${f[i].score}`);
    if (h.id === f[i].id) return;
    // The hits tied with it (within 1e-9) sit next to position i in the exhaustive page.
    let tied = 0;
    for (let j = i; j >= 0 && Math.abs(f[j].score - h.score) <= 1e-9; j--) tied += 1;
    for (let j = i + 1; j < f.length && Math.abs(f[j].score - h.score) <= 1e-9; j++) tied += 1;
    if (tied <= 1) wrong.push(`#${i}: ${h.id} where ${f[i].id} (untied score ${h.score})`);
  });
  expect(wrong).toEqual([]);
}

async function pair(
  items: readonly Item[],
  opts: EmbeddedIndexOptions = {},
): Promise<[EmbeddedIndex, ExhaustiveIndex]> {
  const pruned = new EmbeddedIndex(opts);
  const full = new ExhaustiveIndex(opts);
  await pruned.replaceAll(items);
  await full.replaceAll(items);
  return [pruned, full];
}

/** The property that a pruned and an exhaustive index of each corpus give the same pages for the queries. */
function samePages(
  corpus: fc.Arbitrary<Item[]>,
  queries: fc.Arbitrary<Array<Omit<IndexQuery, 'snippets'>>>,
  opts: EmbeddedIndexOptions,
) {
  return fc.asyncProperty(corpus, queries, async (items, qs) => {
    const [pruned, full] = await pair(items, opts);
    for (const q of qs) {
      const iq: IndexQuery = { ...q, snippets: false };
      expectSamePage(await pruned.search(iq), full.exhaustive(iq));
    }
  });
}

describe('MaxScore pruning', () => {
  const item = (n: number, words: string[], tags: string[], type: Item['type']): Item => ({
    id: `d${n}`,
    type,
    title: words.slice(0, 2).join(' '),
    body: words.join(' '),
    tags,
    created_at: at,
    updated_at: at,
  });
  const corpus = fc
    .array(
      fc.record({
        words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 30 }),
        tags: fc.array(fc.constantFrom('x', 'y'), { maxLength: 1 }),
        type: fc.constantFrom<Item['type']>('article', 'project'),
      }),
      { minLength: 1, maxLength: 80 },
    )
    .map((docs) => docs.map((d, n) => item(n, d.words, d.tags, d.type)));
  const query = fc
    .record({
      text: fc
        .array(fc.constantFrom(...WORDS, 'phot', 'neutr', 'gamm', 'sigmo'), { minLength: 1, maxLength: 8 })
        .map((w) => w.join(' ')),
      limit: fc.integer({ min: 1, max: 12 }),
      offset: fc.integer({ min: 0, max: 5 }),
      type: fc.option(fc.constantFrom<Item['type']>('article', 'project'), { nil: undefined }),
      tag: fc.option(fc.constantFrom('x', 'y'), { nil: undefined }),
    })
    .map(({ type, tag, ...q }) => ({
      ...q,
      filter: { ...(type ? { type: [type] } : {}), ...(tag ? { tag: [tag] } : {}) },
    }));

  it.each([
    ['default ranking', {}],
    [
      'coordination on, plain BM25 (δ 0, the defaults before issue 28)',
      { coordination: true, bm25: { k1: 0.9, b: 0.4, delta: 0 } },
    ],
    [
      'RM3 on small corpora, no title boost',
      {
        coordination: true,
        expansion: { enabled: true, fbDocs: 3, fbTerms: 5, originalWeight: 0.5, minDocs: 1 },
        boost: { title: 0, tags: 0.5, text: 1 },
      },
    ],
  ] as Array<[string, EmbeddedIndexOptions]>)(
    'gives the exhaustive top k on random corpora and queries (%s)',
    async (_name, opts) => {
      await fc.assert(samePages(corpus, fc.array(query, { minLength: 1, maxLength: 5 }), opts), { numRuns: 60 });
    },
    PROPERTY_HANG_GUARD_MS,
  );

  // Adversarial for the bounds: hundreds of documents built from a few terms with small tfs and
  // lengths, so many documents reach (or nearly reach) each term's bound and the k-th best score
  // sits among near-ties: any pruning that is off by a few percent, or a bound that is too low,
  // drops a document that belongs.
  const TIGHT = ['alpha', 'beta', 'gamma', 'delta', 'photon'];
  const tightCorpus = fc
    .array(
      fc.record({
        tfs: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: TIGHT.length, maxLength: TIGHT.length }),
        pad: fc.integer({ min: 0, max: 12 }),
        tag: fc.boolean(),
      }),
      {
        minLength: 100,
        maxLength: 400,
      },
    )
    .map((docs) =>
      docs.map((d, n) => {
        const words = TIGHT.flatMap((w, i) => Array<string>(d.tfs[i]).fill(w));
        return item(
          n,
          [...(words.length ? words : ['omega']), ...Array<string>(d.pad).fill('omega')],
          d.tag ? ['x'] : [],
          'article',
        );
      }),
    );
  const tightQuery = fc.record({
    text: fc.array(fc.constantFrom(...TIGHT, 'phot', 'gamm'), { minLength: 2, maxLength: 6 }).map((w) => w.join(' ')),
    limit: fc.integer({ min: 1, max: 10 }),
    offset: fc.integer({ min: 0, max: 3 }),
    tag: fc.option(fc.constant('x'), { nil: undefined }),
  });

  it.each([
    ['default ranking', {}],
    [
      'coordination and RM3',
      { coordination: true, expansion: { enabled: true, fbDocs: 5, fbTerms: 4, originalWeight: 0.5, minDocs: 1 } },
    ],
  ] as Array<[string, EmbeddedIndexOptions]>)(
    'gives the exhaustive top k where many documents reach the bounds (%s)',
    async (_name, opts) => {
      await fc.assert(samePages(tightCorpus, fc.array(tightQuery, { minLength: 3, maxLength: 8 }), opts), {
        numRuns: 15,
      });
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('stays exact after upserts and replacements change the index', async () => {
    const items = Array.from({ length: 40 }, (_, n) =>
      item(n, [WORDS[n % 14], WORDS[(n * 3) % 14], WORDS[(n * 5) % 14]], [], 'article'),
    );
    const [pruned, full] = await pair(items);
    const q: IndexQuery = { text: 'alpha gamma photon', limit: 5, offset: 0, snippets: false };
    expectSamePage(await pruned.search(q), full.exhaustive(q));
    const more = [item(3, ['photon', 'photon', 'alpha'], [], 'article'), item(99, ['gamma', 'photon'], [], 'article')];
    await pruned.upsert(more);
    await full.upsert(more);
    expectSamePage(await pruned.search(q), full.exhaustive(q));
  });
});

const available = existsSync(`${vaswaniDir()}/doc-text.trec`);

(available ? describe : describe.skip)('MaxScore pruning on Vaswani', () => {
  it('gives the exhaustive top 1000 for every query, full and 2-word', async () => {
    const v = loadVaswani();
    const [pruned, full] = await pair(v.items.map((i): Item => ({ ...i, tags: [], created_at: at, updated_at: at })));
    const texts = v.queries.map((q) => q.text);
    for (const text of [...texts, ...twoWordQueries(texts)]) {
      // The exhaustive top 10 is the head of its top 1,000 (one ranking, cut at k): scored once.
      const exhaustive = full.exhaustive({ text, limit: 1000, offset: 0, snippets: false });
      for (const limit of [10, 1000]) {
        const q: IndexQuery = { text, limit, offset: 0, snippets: false };
        expectSamePage(await pruned.search(q), { total: exhaustive.total, hits: exhaustive.hits.slice(0, limit) });
      }
    }
  }, 120_000);
});
