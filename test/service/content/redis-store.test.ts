import request from 'supertest';
import { RedisServer } from '../../harness/redis';
import { buildTestApp, type TestApp } from '../../helpers/app';
import type { FeatureSet } from '../../../service/features';

async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not met in time');
}

const item = (id: string, body: string) => ({ id, type: 'article', title: id, body });

describe('content in Redis (KVSTORE_URL), shared by replicas', () => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis.stop();
  });
  beforeEach(async () => {
    const input = { service: { environment: 'testing' as const }, kvstore: { url: redis.url }, rateLimit: { enabled: false } };
    a = await buildTestApp(input);
    b = await buildTestApp(input);
  });
  afterEach(async () => {
    await a.deps.kvstore.client?.flushall().catch(() => undefined);
    await a.close();
    await b.close();
  });

  it('uses the Redis store', () => {
    expect((a.deps.features as FeatureSet).context.content.store.kind).toBe('kvstore');
  });

  it("a write on one replica shows up in the other replica's search and listings", async () => {
    const res = await request(a.app).post('/api/ingest').send(item('shared-note', 'Axolotls regrow limbs.'));
    expect(res.status).toBe(201);
    await eventually(async () => (await request(b.app).get('/api/search?q=axolotl')).body.total === 1);
    expect((await request(b.app).get('/api/v1/articles/shared-note')).body.body).toBe('Axolotls regrow limbs.');
    await request(b.app).post('/api/ingest').send(item('shared-note', 'Axolotls are salamanders.'));
    await eventually(async () => (await request(a.app).get('/api/v1/articles/shared-note')).body.body === 'Axolotls are salamanders.');
    // Replacement invalidates the other replica's cache too.
    expect((await request(a.app).get('/api/search?q=salamanders')).body.total).toBe(1);
  });

  it('a new replica loads what is already there', async () => {
    await request(a.app).post('/api/ingest-batch').send({ items: [item('one', 'first'), item('two', 'second')] });
    const c = await buildTestApp({ service: { environment: 'testing' }, kvstore: { url: redis.url } });
    try {
      expect((await request(c.app).get('/api/v1/articles')).body.total).toBe(2);
    } finally {
      await c.close();
    }
  });

  it('keeps content under KVSTORE_KEY_PREFIX; replicas with another prefix do not share it', async () => {
    const input = { service: { environment: 'testing' as const }, kvstore: { url: redis.url, keyPrefix: 'blog-a:content' }, rateLimit: { enabled: false } };
    const c = await buildTestApp(input);
    const other = await buildTestApp({ ...input, kvstore: { ...input.kvstore, keyPrefix: 'blog-b' } });
    try {
      expect((await request(c.app).post('/api/ingest').send(item('prefixed', 'Quokkas smile.'))).status).toBe(201);
      const client = a.deps.kvstore.client!;
      expect(await client.hexists('blog-a:content:items', 'prefixed')).toBe(1);
      expect(await client.xlen('blog-a:content:changes')).toBe(1);
      expect(await client.exists('svc-ai-search:content:items', 'blog-b:items')).toBe(0);
      expect((await request(c.app).get('/api/search?q=quokka')).body.total).toBe(1);
      expect((await request(other.app).get('/api/v1/articles/prefixed')).status).toBe(404);
      // The default prefix, used by a and b, is untouched too.
      expect((await request(a.app).get('/api/v1/articles')).body.total).toBe(0);
    } finally {
      await c.close();
      await other.close();
    }
  });

  it('while Redis is down, writes get 503 JSON and reads and search keep working; then writes resume', async () => {
    await request(a.app).post('/api/ingest').send(item('before-outage', 'Pangolins have scales.'));
    await eventually(async () => (await request(b.app).get('/api/search?q=pangolin')).body.total === 1);
    await redis.kill();
    await eventually(async () => !a.deps.kvstore.available);
    const write = await request(a.app).post('/api/ingest').send(item('during-outage', 'x'));
    expect(write.status).toBe(503);
    expect(write.body).toMatchObject({ error: 'store_unavailable' });
    expect(write.body.message).toMatch(/unreachable/);
    expect((await request(a.app).get('/api/search?q=pangolin')).body.total).toBe(1);
    expect((await request(b.app).get('/api/v1/articles/before-outage')).status).toBe(200);
    await redis.restart();
    await eventually(async () => a.deps.kvstore.available && b.deps.kvstore.available);
    // The restarted Redis is empty (no persistence in tests): writes work again and reach b.
    await eventually(async () => (await request(a.app).post('/api/ingest').send(item('after-outage', 'Okapis are shy.'))).status === 201);
    await eventually(async () => (await request(b.app).get('/api/search?q=okapi')).body.total === 1);
  }, 30_000);
});
