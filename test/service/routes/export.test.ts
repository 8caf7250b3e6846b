import request from 'supertest';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { seedSite, SITE_ITEMS } from './seed';

describe('GET /api/export/<name>', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ service: { environment: 'testing' } });
    await seedSite(t.app);
  });
  afterAll(() => t.close());

  it.each([
    ['articles.json', 3],
    ['projects.json', 2],
    ['experiences.json', 1],
    ['all.json', SITE_ITEMS.length],
  ])('%s is a JSON array of the items', async (name, n) => {
    const res = await request(t.app).get(`/api/export/${name}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${name}"`);
    const items = JSON.parse(res.text);
    expect(items).toHaveLength(n);
    expect(items[0]).toHaveProperty('body');
  });

  it.each(['articles.ndjson', 'projects.ndjson', 'experiences.ndjson', 'all.ndjson'])(
    '%s has one item per line',
    async (name) => {
      const res = await request(t.app)
        .get(`/api/export/${name}`)
        .buffer(true)
        .parse((r, cb) => {
          let s = '';
          r.on('data', (c: Buffer) => (s += c.toString()));
          r.on('end', () => cb(null, s));
        });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
      const lines = (res.body as string).trim().split('\n');
      for (const l of lines) expect(JSON.parse(l)).toHaveProperty('id');
    },
  );

  it('all.md is one markdown document, by type, newest first', async () => {
    const res = await request(t.app).get('/api/export/all.md');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/markdown/);
    const md = res.text;
    expect(md.indexOf('# Articles')).toBeLessThan(md.indexOf('# Projects'));
    expect(md.indexOf('## BM25 explained')).toBeLessThan(md.indexOf('## Running Kubernetes at home'));
    expect(md).toContain('- id: `kubernetes-at-home`');
  });

  it('round-trips: an export uploads again to the same items', async () => {
    const exported = await request(t.app).get('/api/export/all.json');
    const other = await buildTestApp({ service: { environment: 'testing' } });
    try {
      const up = await request(other.app).post('/api/upload').attach('file', Buffer.from(exported.text), 'all.json');
      expect(up.status).toBe(201);
      expect(up.body.count).toBe(SITE_ITEMS.length);
    } finally {
      await other.close();
    }
  });

  it.each([
    ['/api/export/secrets.json', 404],
    ['/api/export/all.csv', 404],
    ['/api/export/..%2F..%2Fetc%2Fpasswd', 400],
    ['/api/export/..%2fpackage.json', 400],
    ['/api/export/%2Fetc%2Fpasswd', 400],
    ['/api/export/..', 400],
    ['/api/export/..%5Cpackage.json', 400],
    ['/api/export//etc/passwd', 400],
    ['/api/export/a/b.json', 400],
    ['/api/export/%00all.json', 400],
    ['/api/export', 404],
  ])('%s answers %i with JSON and no file content', async (path, status) => {
    const res = await request(t.app).get(path);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.error).toBeDefined();
    expect(res.text).not.toMatch(/root:|"dependencies"/);
  });

  it('refuses a raw "../" path (sent without normalisation) with 400', async () => {
    const res = await request(t.app).get('/api/export/../../package.json');
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('dependencies');
  });
});
