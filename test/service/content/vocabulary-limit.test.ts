import request from 'supertest';
import { ITEM_LIMITS } from '../../../service/content/item';
import { buildTestApp, type TestApp } from '../../helpers/app';

/** A body of `n` distinct made-up words. */
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i.toString(36)}`).join(' ');

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
    expect(res.body).toMatchObject({ error: 'invalid_item', message: expect.stringContaining(`more than ${ITEM_LIMITS.distinctWords} distinct words`) });
    expect((await request(t.app).get('/api/v1/articles/huge')).status).toBe(404);
    expect((await request(t.app).get('/api/search').query({ q: 'w1 w2 w3' })).body.total).toBe(0);
  });

  it('POST /api/ingest-batch refuses that item (422 when it is the only one) and stores nothing of it', async () => {
    const res = await request(t.app).post('/api/ingest-batch').send({ items: [huge] });
    expect(res.status).toBe(422);
    expect(res.body.results[0]).toMatchObject({ index: 0, status: 'invalid', field: 'body' });
    expect((await request(t.app).get('/api/v1/articles')).body.total).toBe(0);
  });
});
