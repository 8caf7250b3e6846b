import request from 'supertest';
import { EXPORTS } from '../../../service/content/export';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { seedSite, SITE_ITEMS } from './seed';

/**
 * Issue 39 on the in-process app: `delete`, `delete_where` and `patch` beside `items` in
 * `POST /api/ingest-batch`, and every surface forgets what was deleted: get by id, search (results,
 * total, snippets, long queries with RM3 feedback, phrases with proximity, the result cache),
 * listings and tag pages, every export, chat passages and sources, eval, and `/health`.
 */
const text = (r: request.Request) =>
  r.buffer(true).parse((res, cb) => {
    let s = '';
    res.on('data', (c: Buffer) => (s += c.toString()));
    res.on('end', () => cb(null, s));
  });

describe('POST /api/ingest-batch operations', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ service: { environment: 'testing' } });
    await seedSite(t.app);
  });
  afterEach(() => t.close());
  const batch = (body: unknown) =>
    request(t.app)
      .post('/api/ingest-batch')
      .send(body as object);
  const search = (q: string) => request(t.app).get('/api/search').query({ q });
  const ids = (results: Array<{ id: string }>) => results.map((r) => r.id);

  it('every surface forgets what was deleted, and shows what was patched', async () => {
    // Warm every surface first: the result cache, listings, tag pages, the chat's passages.
    expect(ids((await search('BM25 ranks documents')).body.results)).toContain('bm25-explained');
    expect((await search('longhorn')).body.total).toBe(1);
    expect((await request(t.app).get('/api/v1/articles?tag=search')).body.total).toBe(1);
    expect((await request(t.app).get('/api/v1/articles')).body.total).toBe(3);
    const chatBefore = await request(t.app).post('/api/chat').send({ message: 'How does BM25 rank documents?' });
    expect(ids(chatBefore.body.sources)).toContain('bm25-explained');

    const res = await batch({
      delete: ['bm25-explained', 'never-was'],
      delete_where: { type: 'article', tag: 'HOMELAB' },
      patch: [{ id: 'weather-station', tags: ['hardware', 'sensors'], summary: 'Logs the weather.' }],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      stored: 0,
      failed: 0,
      results: [],
      operations: {
        deleted: ['bm25-explained'],
        not_found: ['never-was'],
        patched: [{ id: 'weather-station', change: 'updated' }],
        delete_where: { count: 1, ids: ['kubernetes-at-home'], truncated: false },
      },
    });
    const gone = ['bm25-explained', 'kubernetes-at-home'];

    // Get by id.
    for (const id of gone) expect((await request(t.app).get(`/api/v1/articles/${id}`)).status).toBe(404);
    // Search: results, total, snippets, the cache (the answer above is not served again).
    const bm25 = await search('BM25 ranks documents');
    expect(bm25.body.cached).toBe(false);
    expect(ids(bm25.body.results)).not.toContain('bm25-explained');
    expect(bm25.body.results.map((r: { snippet: string }) => r.snippet).join(' ')).not.toMatch(/inverse document/i);
    expect((await search('longhorn')).body).toMatchObject({ total: 0, results: [] });
    // A long query (RM3 feedback documents) and a phrase (proximity).
    const long = await search('kubernetes cluster storage longhorn replicates volumes across nodes upgrades drain');
    for (const id of gone) expect(ids(long.body.results)).not.toContain(id);
    expect(ids((await search('"term frequency"')).body.results)).toEqual([]);
    // Listings and tag pages.
    const articles = await request(t.app).get('/api/v1/articles');
    expect(articles.body.total).toBe(1);
    expect(ids(articles.body.items)).toEqual(['prometheus-alerting']);
    expect((await request(t.app).get('/api/v1/articles?tag=search')).body.total).toBe(0);
    expect((await request(t.app).get('/api/v1/articles?tag=homelab')).body.total).toBe(0);
    // Every export.
    for (const name of EXPORTS.keys()) {
      const out = await text(request(t.app).get(`/api/export/${name}`));
      expect(out.status).toBe(200);
      for (const id of gone) expect({ name, has: (out.body as string).includes(id) }).toEqual({ name, has: false });
      expect(out.body as string).not.toContain('Longhorn');
    }
    // Chat: passages and sources.
    const chat = await request(t.app).post('/api/chat').send({ message: 'How does BM25 rank documents?' });
    expect(chat.status).toBe(200);
    for (const id of gone) expect(ids(chat.body.sources)).not.toContain(id);
    expect(chat.body.answer).not.toMatch(/inverse document frequency/i);
    // Eval: the deleted documents are not ranked, and the corpus counts the survivors.
    const ev = await request(t.app)
      .post('/api/eval')
      .send({ queries: [{ query: 'BM25 term frequency', relevant: ['bm25-explained'] }] });
    expect(ev.status).toBe(200);
    expect(ev.body.documents).toBe(SITE_ITEMS.length - 2);
    expect(ev.body.per_query[0].top).not.toContain('bm25-explained');
    // /health.
    expect((await request(t.app).get('/health')).body.content.items).toBe(SITE_ITEMS.length - 2);

    // The patch: the new field everywhere, the others kept.
    const patched = await request(t.app).get('/api/v1/projects/weather-station');
    expect(patched.body).toMatchObject({ tags: ['hardware', 'sensors'], summary: 'Logs the weather.' });
    expect(patched.body.body).toBe(SITE_ITEMS.find((i) => i.id === 'weather-station')!.body);
    expect(ids((await request(t.app).get('/api/v1/projects?tag=sensors')).body.items)).toEqual(['weather-station']);
    expect(ids((await search('sensors')).body.results)).toEqual(['weather-station']);
  });

  it('items and operations in one request: one write, 201, each reported', async () => {
    const res = await batch({
      items: [{ id: 'new-one', type: 'article', title: 'New one', body: 'Fresh words.' }],
      delete: ['weather-station'],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      stored: 1,
      failed: 0,
      results: [{ index: 0, status: 'stored', id: 'new-one', change: 'created' }],
      operations: { deleted: ['weather-station'], not_found: [], patched: [] },
    });
    expect(res.body.operations.delete_where).toBeUndefined();
    expect((await request(t.app).get('/api/v1/projects/weather-station')).status).toBe(404);
    expect((await request(t.app).get('/api/v1/articles/new-one')).status).toBe(200);
  });

  it.each(
    (
      [
        [{ delete_where: { tag: 'search', colour: 'red' } }, 400, 'delete_where.colour'],
        [{ delete_where: {} }, 400, 'delete_where'],
        [{ delete_where: { date_before: '2026-02-30' } }, 400, 'delete_where.date_before'],
        [{ delete_where: { type: 'podcast' } }, 400, 'delete_where.type'],
        [{ delete: Array.from({ length: 1001 }, (_, k) => `id-${k}`) }, 400, 'delete'], // more than 1,000 ids
        [{ delete: 'bm25-explained' }, 400, 'delete'],
        [{ patch: [{ title: 'no id' }] }, 400, 'patch.0.id'],
        [{}, 400, 'items'],
        [{ items: [] }, 400, 'items'],
        [{ patch: [{ id: 'weather-station', title: '' }], delete: ['bm25-explained'] }, 422, 'patch.0.title'],
        [{ patch: [{ id: 'weather-station', url: 'javascript:alert(1)' }] }, 422, 'patch.0.url'],
        [{ patch: [{ id: 'weather-station', colour: 'red' }] }, 422, 'patch.0.colour'],
        [{ patch: [{ id: 'no-such-item', title: 'x' }], delete: ['bm25-explained'] }, 422, 'patch.0.id'],
        [
          { delete: ['bm25-explained'], items: [{ id: 'bm25-explained', type: 'article', title: 'x', body: '' }] },
          422,
          'items.0.id',
        ],
        [{ delete_where: { tag: 'search' }, patch: [{ id: 'bm25-explained', title: 'x' }] }, 422, 'patch.0.id'],
        [{ delete: ['bm25-explained'], items: [{ type: 'article', title: '' }] }, 422, undefined],
      ] as Array<[object, number, string | undefined]>
    ).map(([body, status, field]) => [JSON.stringify(body).slice(0, 100), body, status, field] as const),
  )('refuses %s with %i naming %s, applying nothing', async (_label, body, status, field) => {
    const res = await batch(body);
    expect(res.status).toBe(status);
    expect(typeof res.body.error).toBe('string');
    expect(typeof res.body.message).toBe('string');
    if (field !== undefined) expect(res.body.field).toBe(field);
    else expect(res.body).toMatchObject({ error: 'invalid_items', stored: 0, results: [{ index: 0, field: 'title' }] });
    expect((await request(t.app).get('/health')).body.content.items).toBe(SITE_ITEMS.length);
    expect((await request(t.app).get('/api/v1/articles/bm25-explained')).status).toBe(200);
    expect((await request(t.app).get('/api/v1/projects/weather-station')).body.tags).toEqual(['hardware']);
  });
});
