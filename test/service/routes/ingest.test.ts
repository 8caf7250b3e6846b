import request from 'supertest';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { MAX_BATCH_ITEMS } from '../../../service/routes/ingest';

const item = { type: 'article', title: 'Hello World', body: '# Hello\n\nFirst post.' };

describe('POST /api/ingest', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ service: { environment: 'testing' } });
  });
  afterEach(() => t.close());

  it('stores an item, generates the id from the title and answers 201 with the stored item', async () => {
    const res = await request(t.app)
      .post('/api/ingest')
      .send({ ...item, tags: ['intro', 'Intro'] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: 'hello-world', type: 'article', title: 'Hello World', tags: ['intro'] });
    expect(res.body.created_at).toBe(new Date(t.clock.now()).toISOString());
    expect(res.body.updated_at).toBe(res.body.created_at);
    const got = await request(t.app).get('/api/v1/articles/hello-world');
    expect(got.status).toBe(200);
    expect(got.body.body).toBe(item.body);
  });

  it('replaces an existing id, keeping created_at and moving updated_at', async () => {
    const first = await request(t.app).post('/api/ingest').send(item);
    t.clock.advance(60_000);
    const second = await request(t.app)
      .post('/api/ingest')
      .send({ ...item, body: 'Second version.' });
    expect(second.status).toBe(201);
    expect(second.body.created_at).toBe(first.body.created_at);
    expect(second.body.updated_at).not.toBe(first.body.updated_at);
    const list = await request(t.app).get('/api/v1/articles');
    expect(list.body.total).toBe(1);
    const search = await request(t.app).get('/api/search').query({ q: 'second version' });
    expect(search.body.results.map((r: { id: string }) => r.id)).toEqual(['hello-world']);
  });

  it('is searchable as soon as the write is acknowledged', async () => {
    await request(t.app)
      .post('/api/ingest')
      .send({ ...item, body: 'Zebras migrate across the Serengeti.' });
    const res = await request(t.app).get('/api/search?q=zebra');
    expect(res.body.total).toBe(1);
  });

  it.each([
    [{ ...item, type: 'podcast' }, 'type', /type must be one of article, project, experience/],
    [{ ...item, title: '   ' }, 'title', /title must not be empty/],
    [{ type: 'article', body: 'x' }, 'title', /title is required/],
    [{ type: 'article', title: 'x' }, 'body', /body is required/],
    [{ ...item, id: 'Not A Slug' }, 'id', /id must be a slug/],
    [{ ...item, tags: 'a,b' }, 'tags', /tags must be an array/],
    [{ ...item, tags: ['ok', 3] }, 'tags.1', /tags must be strings/],
    [{ ...item, url: 'javascript:alert(1)' }, 'url', /url must be an absolute http\(s\) URL/],
    [{ ...item, date: '2024-02-30' }, 'date', /date must be a calendar date/],
    [{ ...item, title: 'x'.repeat(501) }, 'title', /longer than 500/],
  ])('refuses an invalid item with 422 naming the field (%#)', async (body, field, message) => {
    const res = await request(t.app).post('/api/ingest').send(body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'invalid_item', field });
    expect(res.body.message).toMatch(message);
    expect(res.body.message).toContain(field);
  });

  it('answers 400 to malformed JSON, an array body or a non-object', async () => {
    const bad = await request(t.app).post('/api/ingest').set('Content-Type', 'application/json').send('{"type": ');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_json');
    const arr = await request(t.app).post('/api/ingest').send([item]);
    expect(arr.status).toBe(400);
    expect(arr.body).toMatchObject({ error: 'bad_request', field: 'body' });
  });

  it('answers 415 to a body that is not JSON', async () => {
    const res = await request(t.app).post('/api/ingest').set('Content-Type', 'text/plain').send('hello');
    expect(res.status).toBe(415);
    expect(res.body.error).toBe('unsupported_media_type');
  });
});

describe('POST /api/ingest-batch', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ service: { environment: 'testing' } });
  });
  afterEach(() => t.close());

  it('stores every valid item even when others fail, with per-item results (207)', async () => {
    const res = await request(t.app)
      .post('/api/ingest-batch')
      .send({
        items: [item, { ...item, title: 'Second', type: 'nope' }, { type: 'project', title: 'Third', body: '' }],
      });
    expect(res.status).toBe(207);
    expect(res.body.stored).toBe(2);
    expect(res.body.failed).toBe(1);
    expect(res.body.results).toEqual([
      { index: 0, status: 'stored', id: 'hello-world', updated_at: expect.any(String), change: 'created' },
      expect.objectContaining({ index: 1, status: 'invalid', field: 'type' }),
      { index: 2, status: 'stored', id: 'third', updated_at: expect.any(String), change: 'created' },
    ]);
    expect((await request(t.app).get('/api/v1/projects/third')).status).toBe(200);
  });

  it('answers 201 when all are stored and 422 when none is', async () => {
    expect(
      (
        await request(t.app)
          .post('/api/ingest-batch')
          .send({ items: [item] })
      ).status,
    ).toBe(201);
    const none = await request(t.app)
      .post('/api/ingest-batch')
      .send({ items: [{ title: 'x' }] });
    expect(none.status).toBe(422);
    expect(none.body.stored).toBe(0);
    expect(none.body).toMatchObject({
      error: 'invalid_items',
      message: expect.stringMatching(/^none of the 1 items was stored; item 0: type: /),
    });
  });

  it('says per item whether it was created, updated or unchanged; an unchanged item is not written again', async () => {
    const one = { id: 'change-kinds', type: 'article', title: 'Change kinds', body: 'first' };
    const first = await request(t.app)
      .post('/api/ingest-batch')
      .send({ items: [one] });
    expect(first.body.results[0]).toMatchObject({ status: 'stored', change: 'created' });
    t.clock.advance(5000);
    const same = await request(t.app)
      .post('/api/ingest-batch')
      .send({ items: [one] });
    expect(same.body.results[0]).toMatchObject({
      status: 'stored',
      change: 'unchanged',
      updated_at: first.body.results[0].updated_at,
    });
    const edited = await request(t.app)
      .post('/api/ingest-batch')
      .send({ items: [{ ...one, body: 'second' }] });
    expect(edited.body.results[0]).toMatchObject({ status: 'stored', change: 'updated' });
    expect(edited.body.results[0].updated_at).not.toBe(first.body.results[0].updated_at);
  });

  it('refuses a missing, empty or oversized items array', async () => {
    const missing = await request(t.app).post('/api/ingest-batch').send({ things: [] });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ field: 'items' });
    const empty = await request(t.app).post('/api/ingest-batch').send({ items: [] });
    expect(empty.status).toBe(400);
    const many = Array.from({ length: MAX_BATCH_ITEMS + 1 }, (_, i) => ({ ...item, id: `i-${i}` }));
    const big = await request(t.app).post('/api/ingest-batch').send({ items: many });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ error: 'batch_too_large', field: 'items' });
  });

  it('takes exactly 1,000 items', async () => {
    const many = Array.from({ length: MAX_BATCH_ITEMS }, (_, i) => ({
      ...item,
      id: `i-${i}`,
      body: `item number ${i}`,
    }));
    const res = await request(t.app).post('/api/ingest-batch').send({ items: many });
    expect(res.status).toBe(201);
    expect(res.body.stored).toBe(1000);
  });

  it('answers 413 to a body over MAX_BODY_SIZE', async () => {
    const small = await buildTestApp({ service: { environment: 'testing', maxBodyBytes: 2048 } });
    try {
      const res = await request(small.app)
        .post('/api/ingest')
        .send({ ...item, body: 'x'.repeat(4096) });
      expect(res.status).toBe(413);
      expect(res.body.error).toBe('payload_too_large');
    } finally {
      await small.close();
    }
  });
});
