import request from 'supertest';
import type { SettingsInput } from '../../../configs';
import { DEFAULT_RANKING } from '../../../service/search/ranking';
import type { FeatureSet } from '../../../service/features';
import { buildTestApp, type TestApp } from '../../helpers/app';

const article = (id: string, body: string) => ({ id, type: 'article', title: id, body });

/**
 * Three documents about lasers (a1 and a2 hold every query term; a3 only "laser", with
 * "mirror"), b1 sharing nothing with the query but "mirror", and 56 unrelated fillers, so the
 * index is past the 50 documents expansion needs. With RM3 over the top 3 documents, "mirror"
 * joins the query and brings b1 in.
 */
const CORPUS = [
  article('a1', 'laser optics beam coherent light'),
  article('a2', 'laser beam optics'),
  article('a3', 'laser mirror'),
  article('b1', 'mirror polishing technique for telescopes'),
  ...Array.from({ length: 56 }, (_, i) => article(`f${i}`, `bread baking flour water recipe number${i}`)),
];
const QUERY = 'laser beam optics';

async function appWith(search: SettingsInput['search'], items: readonly object[] = CORPUS): Promise<TestApp> {
  const t = await buildTestApp({
    service: { environment: 'testing' },
    rateLimit: { enabled: false },
    search: { cacheMaxSize: 1, ...search },
  });
  const res = await request(t.app).post('/api/ingest-batch').send({ items });
  expect(res.status).toBe(201);
  return t;
}

async function ids(t: TestApp, q: string): Promise<string[]> {
  const res = await request(t.app).get('/api/search').query({ q, limit: 100 });
  expect(res.status).toBe(200);
  return res.body.results.map((r: { id: string }) => r.id);
}

async function scores(t: TestApp, q: string): Promise<Record<string, number>> {
  const res = await request(t.app).get('/api/search').query({ q, limit: 100 });
  return Object.fromEntries(res.body.results.map((r: { id: string; score: number }) => [r.id, r.score]));
}

describe('search settings take effect', () => {
  const apps: TestApp[] = [];
  const open = async (search: SettingsInput['search'], items?: readonly object[]) => {
    const t = await appWith(search, items);
    apps.push(t);
    return t;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((t) => t.close()));
  });

  it('defaults: the index ranks with DEFAULT_RANKING', async () => {
    const t = await open({});
    const index = (t.deps.features as FeatureSet).context.search.index as unknown as {
      ranking: typeof DEFAULT_RANKING;
    };
    expect(index.ranking).toEqual(DEFAULT_RANKING);
    expect(await ids(t, QUERY)).toContain('b1');
  });

  it('SEARCH_QUERY_EXPANSION=false: no RM3, only documents holding a query term', async () => {
    const t = await open({ queryExpansion: false });
    expect((await ids(t, QUERY)).sort()).toEqual(['a1', 'a2', 'a3']);
  });

  it('SEARCH_EXPANSION_DOCS: feedback from the top 2 misses "mirror" (in the third)', async () => {
    expect(await ids(await open({ expansionDocs: 2 }), QUERY)).not.toContain('b1');
    expect(await ids(await open({ expansionDocs: 3 }), QUERY)).toContain('b1');
  });

  it('SEARCH_EXPANSION_TERMS: one feedback term is not enough to reach "mirror"', async () => {
    expect(await ids(await open({ expansionTerms: 1 }), QUERY)).not.toContain('b1');
    expect(await ids(await open({ expansionTerms: 20 }), QUERY)).toContain('b1');
  });

  it('SEARCH_BM25_K1: 0 counts a repeated term once, > 0 rewards repeats', async () => {
    const items = [article('once', 'zebra stripes'), article('thrice', 'zebra zebra zebra')];
    const flat = await scores(await open({ bm25K1: 0, bm25B: 0 }, items), 'zebra');
    expect(flat.once).toBeCloseTo(flat.thrice, 12);
    const saturating = await scores(await open({ bm25K1: 1.2, bm25B: 0 }, items), 'zebra');
    expect(saturating.thrice).toBeGreaterThan(saturating.once);
  });

  it('SEARCH_BM25_B: 0 ignores document length, 1 prefers the shorter document', async () => {
    const items = [article('short', 'zebra'), article('long', 'zebra stripes savanna grass herd water')];
    const none = await scores(await open({ bm25B: 0 }, items), 'zebra');
    expect(none.short).toBeCloseTo(none.long, 12);
    const full = await scores(await open({ bm25B: 1 }, items), 'zebra');
    expect(full.short).toBeGreaterThan(full.long);
  });

  it("SEARCH_BM25_DELTA: BM25+'s floor adds the same δ × idf to every document holding the term", async () => {
    const items = [
      article('short', 'zebra'),
      article('long', 'zebra stripes savanna grass herd water acacia dust heat noon'),
    ];
    const plain = await scores(await open({ bm25Delta: 0, bm25B: 1 }, items), 'zebra');
    const plus = await scores(await open({ bm25Delta: 1, bm25B: 1 }, items), 'zebra');
    // idf of a term in both of 2 documents: ln(1 + 0.5 / 2.5).
    expect(plus.short - plain.short).toBeCloseTo(Math.log(1.2), 12);
    expect(plus.long - plain.long).toBeCloseTo(Math.log(1.2), 12);
    expect(plus.short).toBeGreaterThan(plus.long);
  });
});
