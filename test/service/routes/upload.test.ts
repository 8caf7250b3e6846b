import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../helpers/app';

const FIX = join(__dirname, '..', '..', 'fixtures', 'content');

describe('POST /api/upload', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ service: { environment: 'testing' } });
  });
  afterEach(() => t.close());

  it('stores a markdown file with YAML front matter', async () => {
    const res = await request(t.app).post('/api/upload').attach('file', join(FIX, 'kubernetes-notes.md'));
    expect(res.status).toBe(201);
    expect(res.body.count).toBe(1);
    expect(res.body.items[0]).toMatchObject({
      id: 'notes-on-running-kubernetes-at-home',
      type: 'article',
      date: '2024-03-09',
      tags: ['kubernetes', 'homelab'],
      summary: 'What I learned running a small cluster on three mini PCs.',
      url: '/articles/kubernetes-notes',
    });
    expect(res.body.items[0].body).toMatch(/^Running \*\*Kubernetes\*\*/);
  });

  it('stores .txt (first line = title), .json arrays and .ndjson in one request', async () => {
    const res = await request(t.app)
      .post('/api/upload')
      .field('type', 'article')
      .attach('file', join(FIX, 'plain.txt'))
      .attach('file', join(FIX, 'projects.json'))
      .attach('file', join(FIX, 'experiences.ndjson'));
    expect(res.status).toBe(201);
    expect(res.body.count).toBe(5);
    const ids = res.body.items.map((i: { id: string }) => i.id);
    expect(ids).toEqual([
      'search-relevance-without-machine-learning',
      'ai-search-backend',
      'weather-station',
      'platform-engineer-acme',
      'sre-globex',
    ]);
    expect((await request(t.app).get('/api/v1/experiences')).body.total).toBe(2);
    expect((await request(t.app).get('/api/search?q=humidity')).body.results[0].id).toBe('weather-station');
  });

  it('applies the type field to .txt and .md items', async () => {
    const res = await request(t.app)
      .post('/api/upload')
      .field('type', 'project')
      .attach('file', Buffer.from('My tool\nIt does things.'), 'tool.txt');
    expect(res.body.items[0]).toMatchObject({ id: 'my-tool', type: 'project' });
  });

  it('refuses an unsupported file type with 415 and stores nothing', async () => {
    const res = await request(t.app)
      .post('/api/upload')
      .attach('file', join(FIX, 'plain.txt'))
      .attach('file', join(FIX, 'notes.pdf'));
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ error: 'unsupported_file_type', file: 'notes.pdf' });
    expect(res.body.message).toMatch(/accepted: \.md, \.markdown, \.txt, \.json, \.ndjson, \.jsonl/);
    expect((await request(t.app).get('/api/v1/articles')).body.total).toBe(0);
  });

  it('refuses an invalid item with 422 naming file, item and field, and stores nothing (all or nothing)', async () => {
    const res = await request(t.app)
      .post('/api/upload')
      .attach('file', join(FIX, 'projects.json'))
      .attach('file', join(FIX, 'invalid-item.ndjson'));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'invalid_item', field: 'type', file: 'invalid-item.ndjson', index: 1 });
    expect(res.body.message).toMatch(/invalid-item\.ndjson item 1: type/);
    expect((await request(t.app).get('/api/v1/projects')).body.total).toBe(0);
  });

  it.each(['2024-02-30', '2024-13-45', '2024-02-03 25:61:00'])(
    'refuses the front-matter date %s with 422 naming the file and the field, as /api/ingest refuses it (issue 37)',
    async (date) => {
      const md = `---\ntitle: Dated\ndate: ${date}\n---\nBody`;
      const res = await request(t.app).post('/api/upload').attach('file', Buffer.from(md), 'dated.md');
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ error: 'invalid_item', field: 'date', file: 'dated.md' });
      expect(res.body.message).toMatch(/^dated\.md: date: date must be a calendar date/);
      const ingest = await request(t.app)
        .post('/api/ingest')
        .send({ type: 'article', title: 'Dated', body: 'Body', date });
      expect(ingest.status).toBe(422);
      expect(res.body.message).toBe(`dated.md: ${ingest.body.message}`);
      expect((await request(t.app).get('/api/v1/articles')).body.total).toBe(0);
    },
  );

  it('stores a front-matter date as written, as /api/ingest stores it', async () => {
    const md = '---\ntitle: Dated\ndate: 2024-01-05T10:00:00+02:00\n---\nBody';
    const res = await request(t.app).post('/api/upload').attach('file', Buffer.from(md), 'dated.md');
    expect(res.status).toBe(201);
    expect(res.body.items[0].date).toBe('2024-01-05T10:00:00+02:00');
  });

  it('refuses malformed JSON and NDJSON with 400 and the line', async () => {
    const json = await request(t.app).post('/api/upload').attach('file', Buffer.from('{"type":'), 'broken.json');
    expect(json.status).toBe(400);
    expect(json.body.message).toMatch(/broken\.json: not valid JSON/);
    const nd = await request(t.app).post('/api/upload').attach('file', Buffer.from('{"a":1}\n\nnope\n'), 'x.ndjson');
    expect(nd.status).toBe(400);
    expect(nd.body).toMatchObject({ line: 3, file: 'x.ndjson' });
  });

  it('refuses JavaScript front matter (never evaluated)', async () => {
    const md = '---js\n{ title: (globalThis.pwned = "yes") }\n---\nbody';
    const res = await request(t.app).post('/api/upload').attach('file', Buffer.from(md), 'evil.md');
    expect(res.status).toBe(400);
    expect((globalThis as { pwned?: string }).pwned).toBeUndefined();
  });

  it('answers 413 over MAX_BODY_SIZE and stores nothing', async () => {
    const small = await buildTestApp({ service: { environment: 'testing', maxBodyBytes: 4096 } });
    try {
      const big = Buffer.from(`Big file\n${'word '.repeat(2000)}`);
      const res = await request(small.app)
        .post('/api/upload')
        .attach('file', Buffer.from('Small\nok'), 'small.txt')
        .attach('file', big, 'big.txt');
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ error: 'payload_too_large' });
      expect((await request(small.app).get('/api/v1/articles')).body.total).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('answers 415 to a request that is not multipart, and 400 without files', async () => {
    const json = await request(t.app).post('/api/upload').send({ a: 1 });
    expect(json.status).toBe(415);
    const none = await request(t.app).post('/api/upload').field('type', 'article');
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ field: 'file' });
    const wrongType = await request(t.app)
      .post('/api/upload')
      .field('type', 'podcast')
      .attach('file', Buffer.from('a\nb'), 'a.txt');
    expect(wrongType.status).toBe(400);
    expect(wrongType.body).toMatchObject({ field: 'type' });
  });

  it('reads the fixture files it claims to', () => {
    expect(readFileSync(join(FIX, 'kubernetes-notes.md'), 'utf8')).toMatch(/^---/);
  });
});
