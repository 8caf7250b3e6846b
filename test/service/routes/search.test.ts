import request from 'supertest';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { PARSED_QUERIES_MAX, PARSED_QUERY_MAX_CHARS, parsedQueries } from '../../../service/routes/search';
import { seedSite } from './seed';

describe('GET /api/search', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ service: { environment: 'testing' }, search: { cacheMaxSize: 50, cacheTtlSeconds: 0 } });
    await seedSite(t.app);
  });
  afterAll(() => t.close());

  it('answers {query, total, results, took_ms, cached} with ranked, highlighted results', async () => {
    const res = await request(t.app).get('/api/search').query({ q: 'kubernetes cluster storage' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ query: 'kubernetes cluster storage', cached: false });
    expect(typeof res.body.took_ms).toBe('number');
    expect(res.body.total).toBeGreaterThanOrEqual(2);
    const top = res.body.results[0];
    expect(top).toMatchObject({
      id: 'kubernetes-at-home',
      type: 'article',
      title: 'Running Kubernetes at home',
      url: '/articles/kubernetes-at-home',
    });
    expect(top.snippet).toContain('<mark>Storage</mark>');
    expect(top.score).toBeGreaterThan(res.body.results[1].score);
    expect(Object.keys(top).sort()).toEqual(['id', 'score', 'snippet', 'title', 'type', 'url']);
  });

  it('stems: "measuring" finds "measurements"', async () => {
    const res = await request(t.app).get('/api/search?q=measuring');
    expect(res.body.results[0].id).toBe('bm25-explained');
  });

  it('matches prefixes and typos in short queries', async () => {
    expect((await request(t.app).get('/api/search?q=kube')).body.results[0].id).toBeDefined();
    const typo = await request(t.app).get('/api/search?q=promethues');
    expect(typo.body.results.map((r: { id: string }) => r.id)).toContain('prometheus-alerting');
  });

  it('filters by type and tag, and pages with limit and offset', async () => {
    const projects = await request(t.app).get('/api/search?q=search&type=project');
    expect(projects.body.results.map((r: { id: string }) => r.id)).toEqual(['ai-search-backend']);
    const tagged = await request(t.app).get('/api/search?q=kubernetes&tag=HOMELAB');
    expect(tagged.body.results.map((r: { id: string }) => r.id)).toEqual(['kubernetes-at-home']);
    const all = await request(t.app).get('/api/search?q=kubernetes&limit=100');
    const page = await request(t.app).get('/api/search?q=kubernetes&limit=1&offset=1');
    expect(page.body.total).toBe(all.body.total);
    expect(page.body.results).toHaveLength(1);
    expect(page.body.results[0].id).toBe(all.body.results[1].id);
  });

  it('says cached: true for a repeated query, feeds the cache gauges, and a write invalidates it', async () => {
    const q = { q: 'alertmanager severity' };
    expect((await request(t.app).get('/api/search').query(q)).body.cached).toBe(false);
    const again = await request(t.app).get('/api/search').query(q);
    expect(again.body.cached).toBe(true);
    const metrics = await request(t.app).get('/api/metrics/prometheus');
    const size = Number(/^svc_ai_search_cache_size (\d+)/m.exec(metrics.text)?.[1]);
    expect(size).toBeGreaterThan(0);
    expect(metrics.text).toMatch(/^svc_ai_search_cache_maxsize 50$/m);
    expect(metrics.text).toMatch(/^svc_ai_search_cache_usage_percent \d/m);
    await request(t.app)
      .post('/api/ingest')
      .send({ type: 'article', title: 'Severity levels', body: 'Alertmanager severity labels.' });
    const after = await request(t.app).get('/api/search').query(q);
    expect(after.body.cached).toBe(false);
    expect(after.body.results.map((r: { id: string }) => r.id)).toContain('severity-levels');
  });

  it('supports POST /api/search with a JSON body', async () => {
    const res = await request(t.app).post('/api/search').send({ q: 'weather', limit: 5 });
    expect(res.status).toBe(200);
    expect(res.body.results[0].id).toBe('weather-station');
  });

  it('answers a query of stopwords only with no results', async () => {
    const res = await request(t.app).get('/api/search?q=the');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 0, results: [] });
  });

  it.each([
    [`?q=${'a'.repeat(501)}`, 'q', /longer than 500/],
    ['?q=a&q=b', 'q', /given once/],
    ['?q=a&limit=0', 'limit', /limit must be an integer from 1 to 100/],
    ['?q=a&limit=101', 'limit', /from 1 to 100/],
    ['?q=a&limit=ten', 'limit', /integer/],
    ['?q=a&offset=-1', 'offset', /offset/],
    ['?q=a&type=podcast', 'type', /type must be one or more of article, project, experience/],
    ['?q=a&type=article&type=podcast', 'type', /type must be one or more of/],
    ['?date_from=2020-13-45', 'date_from', /date_from must be a calendar date YYYY-MM-DD/],
    ['?date_to=2021-02-29', 'date_to', /date_to must be a calendar date/],
    ['?date_to=2021-01-01&date_to=2021-01-02', 'date_to', /date_to must be a calendar date YYYY-MM-DD, given once/],
    ['?sort=sideways', 'sort', /sort must be one of relevance, date:desc, date:asc, updated:desc/],
    ['?facets=nosuch', 'facets', /facets must be a comma list of type, tag/],
    ['?facets=type,nosuch', 'facets', /facets must be/],
    ['?facets=tag&facet_limit=101', 'facet_limit', /facet_limit must be an integer from 1 to 100/],
    [`?tag=${'t'.repeat(65)}`, 'tag', /tag must be at most 20 tags of at most 64 characters/],
    [`?${Array.from({ length: 21 }, (_, i) => `tag=t${i}`).join('&')}`, 'tag', /at most 20 tags/],
  ])('answers 400 to %s naming %s', async (qs, field, message) => {
    const res = await request(t.app).get(`/api/search${qs}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'bad_request', field });
    expect(res.body.message).toMatch(message);
  });

  it('accepts exactly 500 characters', async () => {
    expect((await request(t.app).get(`/api/search?q=${'a'.repeat(500)}`)).status).toBe(200);
  });
});

describe('the parsed parameters of repeated GET /api/search query strings', () => {
  const request1 = { q: 'x', limit: 10, offset: 0 };
  it('parses a query string once, keeps it frozen, and stays bounded by count and key length', () => {
    const parsed = parsedQueries();
    let calls = 0;
    const parse = () => (calls++, { ...request1 });
    const first = parsed('/api/search?q=x', parse);
    expect(parsed('/api/search?q=x', parse)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(calls).toBe(1);
    // Full: emptied, so the first is parsed again after PARSED_QUERIES_MAX others.
    for (let i = 0; i < PARSED_QUERIES_MAX; i++) parsed(`/api/search?q=${i}`, parse);
    parsed('/api/search?q=x', parse);
    expect(calls).toBe(PARSED_QUERIES_MAX + 2);
    // Too long to keep: parsed every time.
    const long = `/api/search?q=${'y'.repeat(PARSED_QUERY_MAX_CHARS)}`;
    parsed(long, parse);
    parsed(long, parse);
    expect(calls).toBe(PARSED_QUERIES_MAX + 4);
  });

  it('keeps no refusal: a bad query string is validated, and refused, every time', () => {
    const parsed = parsedQueries();
    let calls = 0;
    const refuse = (): never => {
      calls++;
      throw new Error('limit must be an integer from 1 to 100');
    };
    expect(() => parsed('/api/search?q=x&limit=0', refuse)).toThrow(/limit/);
    expect(() => parsed('/api/search?q=x&limit=0', refuse)).toThrow(/limit/);
    expect(calls).toBe(2);
  });
});
