import request from 'supertest';
import { matches, itemDay, type ItemFilter } from '../../../service/content/item-filter';
import type { Item } from '../../../service/content/item';
import { buildTestApp, type TestApp } from '../../helpers/app';

/*
 * Issue 40's self-consistency of `GET /api/search` and `POST /api/search` with filters, sorts and
 * facets, on a corpus of a few hundred items: paging to the end yields exactly `total` distinct
 * items, each passing, in order; the type facet sums to the total; `type=X` has the total the
 * unfiltered facet gave for X; GET and POST answer the same; the cache key covers every parameter.
 */

const WORDS = ['cluster', 'storage', 'latency', 'ranking', 'alerts', 'volumes', 'pods', 'queries', 'index', 'cache'];
const TYPES = ['article', 'project', 'experience'] as const;
const TAGS = ['kubernetes', 'search', 'go', 'rust', 'Homelab'];

/** A deterministic corpus: item n's words, type, tags and date follow from n. */
const ITEMS = Array.from({ length: 240 }, (_, n) => ({
  id: `item-${String(n).padStart(3, '0')}`,
  type: TYPES[n % 3],
  title: `${WORDS[n % 10]} ${WORDS[(n * 3) % 10]}`,
  body: Array.from({ length: 6 + (n % 5) }, (_, k) => WORDS[(n * 7 + k * k) % 10]).join(' '),
  tags: TAGS.filter((_, k) => (n >> k) % 3 === 0),
  ...(n % 4 === 0 ? {} : { date: `20${20 + (n % 5)}-0${1 + (n % 9)}-1${n % 10}` }),
}));

interface Result {
  id: string;
  type: string;
  score: number;
}
interface Answer {
  total: number;
  results: Result[];
  facets?: { type?: Record<string, number>; tag?: Record<string, number> };
}

describe('search with filters, sorts and facets: self-consistency', () => {
  let t: TestApp;
  const stored = new Map<string, Item>();
  beforeAll(async () => {
    t = await buildTestApp({
      service: { environment: 'testing' },
      search: { cacheMaxSize: 50, cacheTtlSeconds: 0 },
      rateLimit: { enabled: false },
    });
    const res = await request(t.app).post('/api/ingest-batch').send({ items: ITEMS });
    expect(res.status).toBe(201);
    for (const id of ITEMS.map((i) => i.id)) {
      const item = (await request(t.app).get(`/api/v1/${ITEMS.find((i) => i.id === id)!.type}s/${id}`)).body;
      stored.set(id, item);
    }
  });
  afterAll(() => t.close());

  const get = async (params: Record<string, string | string[] | number>): Promise<Answer> => {
    const res = await request(t.app).get('/api/search').query(params);
    expect(res.status).toBe(200);
    return res.body as Answer;
  };

  const FILTERS: Array<Record<string, string | string[]>> = [
    {},
    { type: 'article' },
    { type: ['article', 'experience'] },
    { tag: 'KUBERNETES' },
    { tag: ['go', 'homelab'], type: 'project' },
    { date_from: '2022-01-01', date_to: '2023-12-31' },
    { date_from: '2024-05-15', tag: 'search' },
  ];
  const asFilter = (p: Record<string, string | string[]>): ItemFilter => {
    const list = (v: string | string[] | undefined) => (v === undefined ? undefined : ([] as string[]).concat(v));
    return {
      ...(p.type ? { type: list(p.type) as ItemFilter['type'] } : {}),
      ...(p.tag ? { tag: list(p.tag) } : {}),
      ...(p.date_from ? { date_from: p.date_from as string } : {}),
      ...(p.date_to ? { date_to: p.date_to as string } : {}),
    };
  };

  it.each(['', 'cluster storage', 'pods', 'ranking alerts latency volumes'])(
    'pages %j to its end under every filter and sort: total distinct items, each passing, in order',
    async (q) => {
      for (const filter of FILTERS) {
        for (const sort of ['relevance', 'date:desc', 'date:asc', 'updated:desc']) {
          const first = await get({ q, ...filter, sort, limit: 1 });
          const seen: Result[] = [];
          for (let offset = 0; offset < first.total; offset += 37)
            seen.push(...(await get({ q, ...filter, sort, limit: 37, offset })).results);
          const label = JSON.stringify({ q, filter, sort });
          expect({ label, n: seen.length, distinct: new Set(seen.map((r) => r.id)).size }).toEqual({
            label,
            n: first.total,
            distinct: first.total,
          });
          const f = asFilter(filter);
          expect({ label, failing: seen.filter((r) => !matches(stored.get(r.id)!, f)).map((r) => r.id) }).toEqual({
            label,
            failing: [],
          });
          // Relevance: scores never rise (ties within 1e-9 are the scorer's sums); else the sort's key, ties by id.
          const order = sort === 'relevance' && !q ? 'date:desc' : sort;
          const out: string[] = [];
          for (let i = 1; i < seen.length; i++) {
            const [a, b] = [seen[i - 1], seen[i]];
            const [x, y] = [stored.get(a.id)!, stored.get(b.id)!];
            if (order === 'relevance') {
              if (b.score > a.score + 1e-9) out.push(`${a.id} before ${b.id}`);
              continue;
            }
            const key =
              order === 'updated:desc'
                ? Date.parse(y.updated_at) - Date.parse(x.updated_at)
                : order === 'date:asc'
                  ? itemDay(x).localeCompare(itemDay(y))
                  : itemDay(y).localeCompare(itemDay(x));
            if (key > 0 || (key === 0 && a.id > b.id)) out.push(`${a.id} before ${b.id}`);
          }
          expect({ label, out }).toEqual({ label, out: [] });
        }
      }
    },
    // A hang guard only: a few hundred in-process requests per query (test/helpers/property.ts explains).
    300_000,
  );

  it.each(['', 'cluster storage', 'pods'])('the type facet of %j sums to its total and matches type=X', async (q) => {
    for (const filter of FILTERS.filter((f) => !f.type)) {
      const all = await get({ q, ...filter, facets: 'type,tag' });
      const types = all.facets!.type!;
      expect(Object.values(types).reduce((a, b) => a + b, 0)).toBe(all.total);
      for (const type of TYPES) expect((await get({ q, ...filter, type })).total).toBe(types[type]);
      // The tag facet ignores the tag filter: each tag's count is that tag's total.
      for (const [tag, n] of Object.entries(all.facets!.tag!))
        expect((await get({ q, ...filter, tag: [tag] })).total).toBe(n);
    }
  });

  it('answers POST with a JSON body as GET with the same parameters', async () => {
    const gets: Array<Record<string, string | string[]>> = [
      { q: 'cluster', type: ['article', 'project'], tag: 'go', sort: 'date:asc', facets: 'type,tag', facet_limit: '3' },
      { type: 'experience', date_from: '2021-01-01', facets: 'tag', limit: '5', offset: '2' },
    ];
    for (const params of gets) {
      const g = (await request(t.app).get('/api/search').query(params)).body;
      const body = {
        ...params,
        ...(params.facets ? { facets: (params.facets as string).split(',') } : {}),
        ...(params.type ? { type: ([] as string[]).concat(params.type) } : {}),
      };
      const p = (await request(t.app).post('/api/search').send(body)).body;
      const strip = ({ took_ms: _t, cached: _c, ...rest }: Record<string, unknown>) => rest;
      expect(strip(p)).toEqual(strip(g));
      expect(g.total).toBeGreaterThan(0);
    }
  });

  it('keys the result cache by every parameter', async () => {
    const base = { q: 'storage', limit: '5' };
    await get(base);
    const variants: Array<Record<string, string | string[]>> = [
      { type: 'article' },
      { type: ['article', 'project'] },
      { tag: 'go' },
      { date_from: '2023-01-01' },
      { date_to: '2023-01-01' },
      { sort: 'date:asc' },
      { facets: 'type' },
      { facets: 'tag', facet_limit: '2' },
    ];
    for (const v of variants) {
      const res = await request(t.app)
        .get('/api/search')
        .query({ ...base, ...v });
      expect({ v, cached: res.body.cached }).toEqual({ v, cached: false });
      expect(
        (
          await request(t.app)
            .get('/api/search')
            .query({ ...base, ...v })
        ).body.cached,
      ).toBe(true);
    }
  });
});
