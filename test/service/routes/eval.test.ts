import request from 'supertest';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { seedSite } from './seed';

describe('/api/eval', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ service: { environment: 'testing' } });
    await seedSite(t.app);
  });
  afterAll(() => t.close());

  it('names an over-long query as such, not as a non-string', async () => {
    const res = await request(t.app)
      .post('/api/eval')
      .send({ queries: [{ query: 'a'.repeat(501), relevant: ['x'] }] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: 'bad_request',
      field: 'queries.0.query',
      message: 'queries.0.query: query is longer than 500 characters',
    });
  });

  it('GET answers 404 before any evaluation', async () => {
    const res = await request(t.app).get('/api/eval');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  it('POST scores the live index with trec_eval measures; GET returns the last report', async () => {
    const res = await request(t.app)
      .post('/api/eval')
      .send({
        k: 5,
        queries: [
          { query: 'raspberry pi temperature', relevant: ['weather-station'] },
          { query: 'kubernetes', relevant: { 'kubernetes-at-home': 2, 'platform-engineer-acme': 1 } },
          { query: 'quantum chromodynamics', relevant: ['bm25-explained'] },
        ],
      });
    expect(res.status).toBe(200);
    expect(res.body.k).toBe(5);
    expect(res.body.per_query).toHaveLength(3);
    const [pi, kube, none] = res.body.per_query;
    expect(pi).toMatchObject({
      query: 'raspberry pi temperature',
      mrr: 1,
      recall: 1,
      precision: 0.2,
      map: 1,
      ndcg: 1,
      num_rel: 1,
    });
    expect(kube.recall).toBe(1);
    expect(none).toMatchObject({ mrr: 0, recall: 0, map: 0, ndcg: 0, num_ret: 0 });
    // The unanswered query still counts: means are over all three.
    expect(res.body.metrics.recall).toBeCloseTo((1 + 1 + 0) / 3, 10);
    expect(Object.keys(res.body.metrics).sort()).toEqual(['map', 'mrr', 'ndcg', 'precision', 'recall']);
    const last = await request(t.app).get('/api/eval');
    expect(last.body).toEqual(res.body);
  });

  it.each([
    [{}, 'queries'],
    [{ queries: [] }, 'queries'],
    [{ queries: [{ query: '', relevant: ['a'] }] }, 'queries.0.query'],
    [{ queries: [{ query: 'x', relevant: [] }] }, 'queries.0.relevant'],
    [{ queries: [{ query: 'x', relevant: 'a' }] }, 'queries.0.relevant'],
    [{ queries: [{ query: 'x', relevant: ['a'] }], k: 0 }, 'k'],
    [{ queries: [{ query: 'x', relevant: ['a'] }], k: 1001 }, 'k'],
  ])('answers 400 to %j naming %s', async (body, field) => {
    const res = await request(t.app).post('/api/eval').send(body);
    expect(res.status).toBe(400);
    expect(res.body.field).toBe(field);
  });
});
