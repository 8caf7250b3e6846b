import request from 'supertest';
import { BATCH_LIMITS, ITEM_LIMITS } from '../../../service/content/item';
import { buildTestApp, type TestApp } from '../../helpers/app';

/** A body of `n` distinct made-up words, from the `from`-th on. */
const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `w${(from + i).toString(36)}`).join(' ');

describe('writes with an enormous vocabulary', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ service: { environment: 'testing' } });
  });
  afterEach(() => t.close());

  const huge = { id: 'huge', type: 'article', title: 'Huge', body: words(ITEM_LIMITS.distinctWords + 1) };

  it('POST /api/ingest answers 422 {error, message} naming the limit, and stores nothing', async () => {
    const res = await request(t.app).post('/api/ingest').send(huge);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      error: 'invalid_item',
      message: expect.stringContaining(`more than ${ITEM_LIMITS.distinctWords} distinct words`),
    });
    expect((await request(t.app).get('/api/v1/articles/huge')).status).toBe(404);
    expect((await request(t.app).get('/api/search').query({ q: 'w1 w2 w3' })).body.total).toBe(0);
  });

  it('POST /api/ingest-batch refuses that item (422 when it is the only one) and stores nothing of it', async () => {
    const res = await request(t.app)
      .post('/api/ingest-batch')
      .send({ items: [huge] });
    expect(res.status).toBe(422);
    expect(res.body.results[0]).toMatchObject({ index: 0, status: 'invalid', field: 'body' });
    expect((await request(t.app).get('/api/v1/articles')).body.total).toBe(0);
  });

  it('POST /api/ingest-batch answers 413 {error, message} for a batch past BATCH_LIMITS.distinctWords, and stores none of it', async () => {
    // Every item is within its own limit; together they are not.
    const per = ITEM_LIMITS.distinctWords - 1;
    const n = Math.ceil(BATCH_LIMITS.distinctWords / per) + 1;
    const items = Array.from({ length: n }, (_, i) => ({
      id: `part-${i}`,
      type: 'article',
      title: 'w0',
      body: words(per, i * per),
    }));
    const res = await request(t.app)
      .post('/api/ingest-batch')
      .send({ items: [{ type: 'article', title: 'Small', body: 'fine' }, ...items] });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({
      error: 'batch_vocabulary_too_large',
      message: expect.stringContaining(`more than ${BATCH_LIMITS.distinctWords} distinct words`),
    });
    expect((await request(t.app).get('/api/v1/articles')).body.total).toBe(0);
    // Half of it goes through.
    const ok = await request(t.app)
      .post('/api/ingest-batch')
      .send({ items: items.slice(0, Math.floor(n / 2)) });
    expect(ok.status).toBe(201);
  });

  it('POST /api/upload answers 413 for files whose items are past BATCH_LIMITS.distinctWords together, and stores none', async () => {
    const per = ITEM_LIMITS.distinctWords - 1;
    const n = Math.ceil(BATCH_LIMITS.distinctWords / per) + 1;
    const items = Array.from({ length: n }, (_, i) => ({
      id: `part-${i}`,
      type: 'article',
      title: 'w0',
      body: words(per, i * per),
    }));
    const res = await request(t.app)
      .post('/api/upload')
      .attach('file', Buffer.from(JSON.stringify(items)), 'parts.json');
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: 'batch_vocabulary_too_large', message: expect.any(String) });
    expect((await request(t.app).get('/api/v1/articles')).body.total).toBe(0);
  });
});
