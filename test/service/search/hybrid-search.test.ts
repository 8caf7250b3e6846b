import type { Item, ItemType } from '../../../service/content/item';
import { EmbeddedIndex } from '../../../service/search/embedded-index';
import type { ScoredId } from '../../../service/search/fusion';
import { meaningPage, type MeaningQuery } from '../../../service/search/hybrid-search';
import type { IndexQuery } from '../../../service/search/search-index';

/*
 * meaningPage with its semantic candidates still coming (a vector search running meanwhile, issue
 * 41): the keyword search starts first and the page is the one the candidates in hand give.
 */

const at = '2026-01-01T00:00:00.000Z';
const WORDS = ['laser', 'beam', 'photon', 'proton', 'alpha', 'gamma', 'delta', 'sigma'];
const TYPES: ItemType[] = ['article', 'project', 'experience'];
const items: Item[] = Array.from({ length: 60 }, (_, n) => ({
  id: `d${String(n).padStart(2, '0')}`,
  type: TYPES[n % 3],
  title: `${WORDS[n % 8]} ${WORDS[(n * 3) % 8]}`,
  body: Array.from({ length: 6 + (n % 5) }, (_, j) => WORDS[(n * 7 + j * 5) % 8]).join(' '),
  tags: n % 4 === 0 ? ['x'] : [],
  created_at: at,
  updated_at: at,
}));
// Candidates: every third item, similarity falling with n (some keyword matches, some not).
const nearest: ScoredId[] = items.filter((_, n) => n % 3 !== 1).map((it, n) => ({ id: it.id, score: 1 - n / 100 }));

/** A promise and its resolution, to let the keyword search run before the candidates come. */
function later<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('meaningPage with pending candidates', () => {
  let index: EmbeddedIndex;
  beforeAll(async () => {
    index = new EmbeddedIndex();
    await index.replaceAll(items);
    await index.settled();
  });

  const queries: Array<Partial<MeaningQuery>> = [
    { text: 'laser beam' },
    { text: 'photon gamma sigma delta', offset: 5, limit: 20 },
    { text: 'alpha', filter: { type: ['article', 'project'] }, facets: ['type', 'tag'], fusion: 'rrf', ratio: 0.5 },
    { text: 'nosuchword', facets: ['type'] },
  ];

  it.each(queries.map((q) => [JSON.stringify(q), q]))(
    'gives the page of the candidates in hand, the keyword search started first (%s)',
    async (_label, extra) => {
      const q: MeaningQuery = {
        mode: 'hybrid',
        text: '',
        limit: 10,
        offset: 0,
        nearest,
        ratio: 0.1,
        fusion: 'normalized',
        candidates: 8,
        ...extra,
      };
      const searched: IndexQuery[] = [];
      const wrapped = {
        search: (x: IndexQuery) => {
          searched.push(x);
          return index.search(x);
        },
        sorted: index.sorted.bind(index),
      };
      const expected = await meaningPage(wrapped, q);
      searched.length = 0;
      const pending = later<readonly ScoredId[]>();
      const page = meaningPage(wrapped, { ...q, nearest: pending.promise });
      // The keyword search is asked for before the candidates exist.
      await new Promise((r) => setImmediate(r));
      expect(searched).toHaveLength(1);
      pending.resolve(nearest);
      expect(await page).toEqual(expected);
    },
  );

  it('asks the keyword search for the page alone with normalized fusion, for the first `candidates` with rrf', async () => {
    const asked = async (fusion: MeaningQuery['fusion']) => {
      const searched: IndexQuery[] = [];
      const search = (x: IndexQuery) => {
        searched.push(x);
        return index.search(x);
      };
      const q = { text: 'photon gamma sigma delta', limit: 3, offset: 2, ratio: 0.1, fusion, candidates: 30 };
      await meaningPage({ search, sorted: index.sorted.bind(index) }, { mode: 'hybrid', nearest, ...q });
      return searched.map((x) => [x.limit, x.scoreAlso ?? false]);
    };
    expect(await asked('normalized')).toEqual([[5, true]]);
    expect(await asked('rrf')).toEqual([[30, false]]);
  });

  it('rejects with the vector search failure, and leaves the index free', async () => {
    const pending = later<readonly ScoredId[]>();
    const page = meaningPage(
      { search: (x) => index.search(x), sorted: index.sorted.bind(index) },
      {
        mode: 'hybrid',
        text: 'laser',
        limit: 10,
        offset: 0,
        nearest: pending.promise,
        ratio: 0.1,
        fusion: 'normalized',
        candidates: 8,
      },
    );
    pending.reject(new Error('vector search failed'));
    await expect(page).rejects.toThrow('vector search failed');
    expect((await index.search({ text: 'laser', limit: 3, offset: 0 })).hits.length).toBeGreaterThan(0);
  });

  it('snippetsOf gives each id the snippet snippetOf gives it', () => {
    const ids = ['d00', 'd07', 'nosuch', 'd31'];
    expect(index.snippetsOf(ids, 'laser photon')).toEqual(ids.map((id) => index.snippetOf(id, 'laser photon')));
    expect(index.snippetsOf([], 'laser')).toEqual([]);
  });
});
