import request from 'supertest';
import { fakeEmbedding, FAKE_EMBEDDING_DIMENSIONS } from '../../../tools/harness/fake-embeddings';
import { FakeOpenAi } from '../../../tools/harness/fake-openai';
import type { FeatureSet } from '../../../service/features';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { MemoryVectorFeed } from '../../helpers/memory-vector-feed';

const DIMS = FAKE_EMBEDDING_DIMENSIONS;

/** Items of the test, and the text their vectors are made of (the fake embeds as the content side would). */
const ITEMS = [
  { id: 'automobile-care', title: 'Caring for an automobile', body: 'Wash the motorcar, check the tyres and the oil.' },
  { id: 'film-night', title: 'A film night', body: 'We watched a picture at the cinema downtown.' },
  { id: 'car-sharing', title: 'Car sharing in town', body: 'Sharing a car saves money and parking space.' },
  { id: 'doctor-visit', title: 'Seeing a physician', body: 'The medic listened and wrote a prescription.' },
  { id: 'garden', title: 'A small garden', body: 'Tomatoes and beans in raised beds.' },
];
const vectorOf = (i: (typeof ITEMS)[number]) => fakeEmbedding(`${i.title} ${i.body}`, DIMS);

const ids = (res: request.Response): string[] => res.body.results.map((r: { id: string }) => r.id);

describe('search by meaning (issue 41): mode, semantic_ratio, vector', () => {
  let fake: FakeOpenAi;
  let t: TestApp;
  let feed: MemoryVectorFeed;
  const embeddingCalls = () => fake.requests.filter((r) => r.path === '/v1/embeddings').length;

  beforeAll(async () => {
    fake = await FakeOpenAi.start();
    feed = new MemoryVectorFeed();
    t = await buildTestApp(
      {
        service: { environment: 'testing' },
        rateLimit: { enabled: false },
        embeddings: { provider: 'openai', baseUrl: fake.url, dimensions: DIMS, maxRetries: 0 },
      },
      { featureOptions: { vectorFeed: feed } },
    );
    const items = ITEMS.map((i) => ({ ...i, type: 'article', tags: i.id === 'garden' ? ['home'] : ['town'] }));
    expect((await request(t.app).post('/api/ingest-batch').send({ items })).status).toBe(201);
    feed.put(...ITEMS.map((i) => ({ id: i.id, vector: vectorOf(i) })));
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
  });

  it('mode=keyword is the keyword ranking: the same answer as a search without vectors would give', async () => {
    const res = await request(t.app).get('/api/search').query({ q: 'car', mode: 'keyword' });
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe('keyword');
    const index = (t.deps.features as FeatureSet).context.search.index;
    const today = await index.search({ text: 'car', limit: 10, offset: 0 });
    expect(
      res.body.results.map((r: { id: string; score: number; snippet: string }) => [r.id, r.score, r.snippet]),
    ).toEqual(today.hits.map((h) => [h.id, h.score, h.snippet]));
    expect(res.body.total).toBe(today.total);
    expect(ids(res)[0]).toBe('car-sharing');
    expect(embeddingCalls()).toBe(0);
  });

  it('mode=semantic finds an item that shares no word with the query but means the same', async () => {
    const res = await request(t.app).get('/api/search').query({ q: 'vehicle', mode: 'semantic', limit: 2 });
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe('semantic');
    expect(ids(res)).toEqual(expect.arrayContaining(['automobile-care']));
    expect(res.body.results[0].score).toBeGreaterThan(0.3);
    // The keyword search finds nothing for it.
    expect((await request(t.app).get('/api/search').query({ q: 'vehicle', mode: 'keyword' })).body.total).toBe(0);
  });

  it('hybrid is the default once items have vectors, and blends both: the keyword match and the one by meaning', async () => {
    const res = await request(t.app).get('/api/search').query({ q: 'car', facets: 'type,tag' });
    expect(res.body.mode).toBe('hybrid');
    expect(ids(res).slice(0, 2).sort()).toEqual(['automobile-care', 'car-sharing']);
    // total and facets count the result set: the keyword matches with the semantic candidates
    expect(res.body.total).toBe(ITEMS.length);
    expect(res.body.facets.type.article).toBe(ITEMS.length);
    expect(res.body.facets.tag).toEqual({ town: 4, home: 1 });
    const filtered = await request(t.app).get('/api/search').query({ q: 'car', tag: 'home', facets: 'tag' });
    expect(ids(filtered)).toEqual(['garden']);
    expect(filtered.body.total).toBe(1);
    expect(filtered.body.facets.tag).toEqual({ town: 4, home: 1 });
  });

  it('semantic_ratio 0 ranks by keyword first, 1 by meaning first', async () => {
    const kw = await request(t.app).get('/api/search').query({ q: 'car sharing', semantic_ratio: 0 });
    expect(ids(kw)[0]).toBe('car-sharing');
    const sem = await request(t.app).get('/api/search').query({ q: 'automobile', semantic_ratio: '1' });
    expect(ids(sem)[0]).toBe('automobile-care');
  });

  it('POST with a vector searches by it, without calling the embedder', async () => {
    const vector = Array.from(fakeEmbedding('physician', DIMS));
    const res = await request(t.app).post('/api/search').send({ vector, mode: 'semantic', limit: 1 });
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(['doctor-visit']);
    expect(embeddingCalls()).toBe(0);
  });

  it('a repeated query costs one provider call (the query cache), even after a write empties the result cache', async () => {
    await request(t.app).get('/api/search').query({ q: 'cinema evening', mode: 'semantic' });
    const note = { id: 'note', type: 'article', title: 'A note', body: 'Nothing much.' };
    expect(
      (
        await request(t.app)
          .post('/api/ingest-batch')
          .send({ items: [note] })
      ).status,
    ).toBe(201);
    const again = await request(t.app).get('/api/search').query({ q: 'cinema  evening', mode: 'semantic' });
    expect(again.body.cached).toBe(false);
    expect(embeddingCalls()).toBe(1);
  });

  it.each([
    [{ mode: 'meaning' }, 'mode'],
    [{ semantic_ratio: '1.5' }, 'semantic_ratio'],
    [{ semantic_ratio: 'half' }, 'semantic_ratio'],
  ])('GET %j → 400 naming %s', async (params, field) => {
    const res = await request(t.app)
      .get('/api/search')
      .query({ q: 'car', ...params });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: expect.any(String), field });
    expect(res.body.message).toContain(field);
  });

  it.each([
    [{ vector: [1, 2, 3] }, 'EMBEDDINGS_DIMENSIONS'],
    [{ vector: ['a'] }, 'finite'],
    [{ vector: 'x' }, 'array'],
    [{ vector: [] }, 'finite'],
    [{ semantic_ratio: -0.1 }, 'semantic_ratio'],
    [{ mode: 3 }, 'mode'],
  ])('POST %j → 400 naming the field', async (body, words) => {
    const res = await request(t.app)
      .post('/api/search')
      .send({ q: 'car', ...body });
    expect(res.status).toBe(400);
    expect(String(res.body.field).split('.')[0]).toBe(Object.keys(body)[0]);
    expect(res.body.message).toContain(words);
  });

  it('an embedder that fails: keyword results with semantic: degraded, 200 not 5xx; /health says degraded until a query is embedded again', async () => {
    fake.embeddingFallback = { kind: 'status', status: 503 };
    try {
      // A query not embedded before (a cached vector would need no call).
      const res = await request(t.app).get('/api/search').query({ q: 'sharing parking' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ mode: 'keyword', semantic: 'degraded' });
      expect(ids(res)).toEqual(['car-sharing']);
      const health = await request(t.app).get('/health');
      expect(health.body.semantic).toMatchObject({ status: 'degraded', pending: 0, items: ITEMS.length });
    } finally {
      fake.embeddingFallback = { kind: 'vectors' };
    }
    // The degraded answer was not cached: the same query is embedded now.
    const ok = await request(t.app).get('/api/search').query({ q: 'sharing parking' });
    expect(ok.body.mode).toBe('hybrid');
    expect(ok.body.semantic).toBeUndefined();
    expect((await request(t.app).get('/health')).body.semantic.status).toBe('ok');
  });

  it('follows the feed: a removed item leaves semantic results, a put one joins them', async () => {
    const q = { q: 'physician', mode: 'semantic', limit: 1 };
    expect(ids(await request(t.app).get('/api/search').query(q))).toEqual(['doctor-visit']);
    feed.remove('doctor-visit');
    expect(ids(await request(t.app).get('/api/search').query(q))).not.toContain('doctor-visit');
    feed.put({ id: 'doctor-visit', vector: vectorOf(ITEMS[3]) });
    expect(ids(await request(t.app).get('/api/search').query(q))).toEqual(['doctor-visit']);
  });
});

describe('search without an embedder or vectors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ service: { environment: 'testing' }, rateLimit: { enabled: false } });
    const car = { id: 'car', type: 'article', title: 'A car', body: 'Wheels.' };
    expect(
      (
        await request(t.app)
          .post('/api/ingest-batch')
          .send({ items: [car] })
      ).status,
    ).toBe(201);
  });
  afterAll(() => t.close());

  it('answers by keyword as before (mode: keyword), and a semantic request says semantic: off', async () => {
    const res = await request(t.app).get('/api/search').query({ q: 'car' });
    expect(res.body).toMatchObject({ mode: 'keyword', total: 1 });
    expect(res.body.semantic).toBeUndefined();
    const sem = await request(t.app).get('/api/search').query({ q: 'car', mode: 'semantic' });
    expect(sem.status).toBe(200);
    expect(sem.body).toMatchObject({ mode: 'keyword', semantic: 'off', total: 1 });
    expect((await request(t.app).get('/health')).body.semantic).toEqual({ status: 'off', pending: 0, items: 0 });
  });
});
