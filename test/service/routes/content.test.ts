import request from 'supertest';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { seedSite } from './seed';

describe('GET /api/v1/{articles,projects,experiences}', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ service: { environment: 'testing' } });
    await seedSite(t.app);
  });
  afterAll(() => t.close());

  it('lists articles newest first, without bodies, with total/limit/offset', async () => {
    const res = await request(t.app).get('/api/v1/articles');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 3, limit: 20, offset: 0 });
    expect(res.body.items.map((i: { id: string }) => i.id)).toEqual([
      'bm25-explained',
      'kubernetes-at-home',
      'prometheus-alerting',
    ]);
    expect(res.body.items[0].body).toBeUndefined();
    expect(res.body.items[0]).toMatchObject({ title: 'BM25 explained', date: '2024-11-02' });
  });

  it('pages and filters by tag', async () => {
    const page = await request(t.app).get('/api/v1/articles?limit=1&offset=1');
    expect(page.body.items.map((i: { id: string }) => i.id)).toEqual(['kubernetes-at-home']);
    expect(page.body.total).toBe(3);
    const tagged = await request(t.app).get('/api/v1/articles?tag=search');
    expect(tagged.body.items.map((i: { id: string }) => i.id)).toEqual(['bm25-explained']);
  });

  it('filters by several tags and a date range, and sorts oldest first or by update (issue 40)', async () => {
    const ids = async (qs: string) => {
      const res = await request(t.app).get(`/api/v1/articles?${qs}`);
      expect(res.status).toBe(200);
      return { total: res.body.total, ids: res.body.items.map((i: { id: string }) => i.id) };
    };
    expect(await ids('tag=search&tag=HOMELAB')).toEqual({ total: 2, ids: ['bm25-explained', 'kubernetes-at-home'] });
    expect(await ids('date_from=2024-01-01')).toEqual({ total: 2, ids: ['bm25-explained', 'kubernetes-at-home'] });
    expect(await ids('date_to=2024-03-09')).toEqual({ total: 2, ids: ['kubernetes-at-home', 'prometheus-alerting'] });
    expect(await ids('date_from=2024-03-09&date_to=2024-03-09&tag=kubernetes')).toEqual({
      total: 1,
      ids: ['kubernetes-at-home'],
    });
    expect(await ids('sort=date:asc')).toEqual({
      total: 3,
      ids: ['prometheus-alerting', 'kubernetes-at-home', 'bm25-explained'],
    });
    expect(await ids('sort=date:asc&limit=1&offset=1')).toEqual({ total: 3, ids: ['kubernetes-at-home'] });
    // Seeded in one batch: one updated_at, so ties by id.
    expect(await ids('sort=updated:desc')).toEqual({
      total: 3,
      ids: ['bm25-explained', 'kubernetes-at-home', 'prometheus-alerting'],
    });
  });

  it.each([
    ['sort=relevance', 'sort', /sort must be one of date:desc, date:asc, updated:desc/],
    ['date_from=2024-02-30', 'date_from', /date_from must be a calendar date/],
    ['date_to=x', 'date_to', /date_to must be a calendar date/],
  ])('answers 400 to %s naming %s', async (qs, field, message) => {
    const res = await request(t.app).get(`/api/v1/articles?${qs}`);
    expect(res.status).toBe(400);
    expect(res.body.field).toBe(field);
    expect(res.body.message).toMatch(message);
  });

  it.each([
    ['/api/v1/projects', ['ai-search-backend', 'weather-station']],
    ['/api/v1/experiences', ['platform-engineer-acme']],
  ])('%s lists its own type only', async (path, ids) => {
    const res = await request(t.app).get(path);
    expect(res.body.items.map((i: { id: string }) => i.id)).toEqual(ids);
  });

  it('gets one item with its body, and 404 when absent or of another type', async () => {
    const one = await request(t.app).get('/api/v1/projects/weather-station');
    expect(one.status).toBe(200);
    expect(one.body.body).toMatch(/Raspberry Pi/);
    const absent = await request(t.app).get('/api/v1/articles/nope');
    expect(absent.status).toBe(404);
    expect(absent.body).toMatchObject({ error: 'not_found' });
    expect((await request(t.app).get('/api/v1/articles/weather-station')).status).toBe(404);
  });

  it('answers 400 to bad paging', async () => {
    const res = await request(t.app).get('/api/v1/articles?limit=1000');
    expect(res.status).toBe(400);
    expect(res.body.field).toBe('limit');
  });
});
