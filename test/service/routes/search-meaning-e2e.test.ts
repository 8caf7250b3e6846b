import request from 'supertest';
import type { FeatureSet } from '../../../service/features';
import { FAKE_EMBEDDING_DIMENSIONS } from '../../../tools/harness/fake-embeddings';
import { FakeOpenAi } from '../../../tools/harness/fake-openai';
import { buildTestApp, type TestApp } from '../../helpers/app';

/**
 * Search by meaning end to end (issue 41, "What must hold"): items written through the API are
 * embedded by the content side's worker (the harness's fake embeddings server, whose vectors
 * follow a small synonym table: fake-embeddings.ts), stored, fed to the vector index, and queried
 * by `mode`. Nothing is handed to the index by the test: the stored vector feed is the real one.
 */

// A hang guard only (issue 36): the waits poll for a state (the backlog drained), none measures time.
jest.setTimeout(120_000);

const ITEMS = [
  { id: 'automobile-care', title: 'Caring for an automobile', body: 'Wash the motorcar, check the tyres and the oil.' },
  { id: 'film-night', title: 'A film night', body: 'We watched a picture at the cinema downtown.' },
  { id: 'car-sharing', title: 'Car sharing in town', body: 'Sharing a car saves money and parking space.' },
  { id: 'doctor-visit', title: 'Seeing a physician', body: 'The medic listened and wrote a prescription.' },
  { id: 'garden', title: 'A small garden', body: 'Tomatoes and beans in raised beds.' },
];

const ids = (res: request.Response): string[] => res.body.results.map((r: { id: string }) => r.id);

async function until(ok: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await ok())) await new Promise((r) => setTimeout(r, 20));
}

describe('search by meaning, end to end with the fake embeddings server', () => {
  let fake: FakeOpenAi;
  let t: TestApp;
  let tokensBefore: number;
  const tokensUsed = async () =>
    Number(
      /^svc_ai_search_total_tokens_used (\S+)/m.exec((await request(t.app).get('/api/metrics/prometheus')).text)?.[1],
    );

  beforeAll(async () => {
    fake = await FakeOpenAi.start();
    t = await buildTestApp({
      service: { environment: 'testing' },
      rateLimit: { enabled: false },
      embeddings: {
        provider: 'openai',
        baseUrl: fake.url,
        dimensions: FAKE_EMBEDDING_DIMENSIONS,
        maxRetries: 0,
        retryMaxWaitMs: 200,
      },
    });
    tokensBefore = await tokensUsed();
    const items = ITEMS.map((i) => ({ ...i, type: 'article', tags: ['town'] }));
    expect((await request(t.app).post('/api/ingest-batch').send({ items })).status).toBe(201);
    const feed = (t.deps.features as FeatureSet).vectors.feed;
    await until(async () => {
      const health = (await request(t.app).get('/health')).body;
      return feed.pending() === 0 && health.semantic?.items === ITEMS.length;
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('mode=semantic finds an item that shares no word with the query but means the same', async () => {
    const res = await request(t.app).get('/api/search').query({ q: 'vehicle', mode: 'semantic', limit: 2 });
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe('semantic');
    expect(ids(res)).toContain('automobile-care');
    expect((await request(t.app).get('/api/search').query({ q: 'vehicle', mode: 'keyword' })).body.total).toBe(0);
  });

  it('mode=hybrid blends the keyword match and the one by meaning; mode=keyword is the keyword ranking', async () => {
    const hybrid = await request(t.app).get('/api/search').query({ q: 'car', mode: 'hybrid' });
    expect(hybrid.status).toBe(200);
    expect(hybrid.body.mode).toBe('hybrid');
    expect(ids(hybrid).slice(0, 2).sort()).toEqual(['automobile-care', 'car-sharing']);
    const keyword = await request(t.app).get('/api/search').query({ q: 'car', mode: 'keyword' });
    const today = await (t.deps.features as FeatureSet).context.search.index.search({
      text: 'car',
      limit: 10,
      offset: 0,
    });
    expect(keyword.body.results.map((r: { id: string; score: number }) => [r.id, r.score])).toEqual(
      today.hits.map((h) => [h.id, h.score]),
    );
    expect(ids(keyword)[0]).toBe('car-sharing');
  });

  it('a bad mode or semantic_ratio is a 400 naming it', async () => {
    const mode = await request(t.app).get('/api/search').query({ q: 'car', mode: 'magic' });
    expect(mode.status).toBe(400);
    expect(mode.body.field).toBe('mode');
    const ratio = await request(t.app).get('/api/search').query({ q: 'car', semantic_ratio: '1.5' });
    expect(ratio.status).toBe(400);
    expect(ratio.body.field).toBe('semantic_ratio');
  });

  it('the tokens the server billed (items and queries) equal the growth of svc_ai_search_total_tokens_used', async () => {
    expect(fake.embeddingTokensBilled).toBeGreaterThan(0);
    expect((await tokensUsed()) - tokensBefore).toBe(fake.embeddingTokensBilled);
  });

  it('the chat retrieves by meaning: a question sharing no word with an item cites it', async () => {
    const res = await request(t.app).post('/api/chat').send({ message: 'How should I look after my vehicle?' });
    expect(res.status).toBe(200);
    expect(res.body.sources.map((s: { id: string }) => s.id)).toContain('automobile-care');
  });

  it('with the server stopped, a write answers 201 and hybrid answers 200 with keyword results', async () => {
    await fake.close();
    const write = await request(t.app)
      .post('/api/ingest')
      .send({ id: 'bicycle', type: 'article', title: 'A bicycle', body: 'Two wheels and a bell.' });
    expect(write.status).toBe(201);
    const res = await request(t.app).get('/api/search').query({ q: 'bicycle bell' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ mode: 'keyword', semantic: 'degraded' });
    expect(ids(res)).toEqual(['bicycle']);
    await until(() => (t.deps.features as FeatureSet).vectors.feed.pending() >= 1);
  });
});
