import request from 'supertest';
import type { SettingsInput } from '../../../../configs';
import type { FeatureSet } from '../../../../service/features';
import { contentKeys } from '../../../../service/content/redis-store/redis-keys';
import { buildTestApp, type TestApp } from '../../../helpers/app';
import { waitFor } from '../../../../tools/harness/ports';
import { RedisCluster } from '../../../../tools/harness/redis-cluster';

const item = (id: string, body: string) => ({ id, type: 'article', title: id, body });

describe('content keys', () => {
  it('carry one hash tag on a cluster, and stay as they were on standalone and sentinel', () => {
    expect(contentKeys('svc-ai-search:content', 'cluster')).toEqual({
      items: '{svc-ai-search:content}:items',
      changes: '{svc-ai-search:content}:changes',
      epoch: '{svc-ai-search:content}:epoch',
      deleted: '{svc-ai-search:content}:deleted',
      revived: '{svc-ai-search:content}:revived',
      vectors: '{svc-ai-search:content}:vectors',
      vectorClaims: '{svc-ai-search:content}:vclaim',
    });
    expect(contentKeys('blog:{content}', 'cluster').items).toBe('blog:{content}:items');
    expect(contentKeys('svc-ai-search:content', 'standalone').items).toBe('svc-ai-search:content:items');
    expect(contentKeys('svc-ai-search:content', 'sentinel').changes).toBe('svc-ai-search:content:changes');
  });
});

describe('content on a three-master Redis Cluster, shared by two replicas (real redis-server)', () => {
  let cluster: RedisCluster;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    cluster = await RedisCluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  const input = (): SettingsInput => ({
    service: { environment: 'testing' },
    kvstore: { url: cluster.url(1), topology: { mode: 'cluster', nodes: cluster.seeds } },
    rateLimit: { enabled: false },
  });
  beforeEach(async () => {
    await cluster.flushAll();
    a = await buildTestApp(input());
    b = await buildTestApp(input());
  });
  afterEach(async () => {
    await a.close();
    await b.close();
  });

  it('ingested through one replica, served by the other; every key in one slot, no MOVED or CROSSSLOT', async () => {
    expect(
      (await request(a.app).post('/api/ingest').send(item('cluster-note', 'Tardigrades survive vacuum.'))).status,
    ).toBe(201);
    await waitFor(
      'the other replica to index it',
      async () => (await request(b.app).get('/api/search?q=tardigrade')).body.total === 1,
    );
    expect((await request(b.app).get('/api/v1/articles/cluster-note')).body.body).toBe('Tardigrades survive vacuum.');
    expect(
      (
        await request(b.app)
          .post('/api/ingest-batch')
          .send({ items: [item('two', 'Octopuses have three hearts.'), item('three', 'Crows use tools.')] })
      ).status,
    ).toBe(201);
    await waitFor(
      'both replicas to hold three items',
      async () => (await request(a.app).get('/api/v1/articles')).body.total === 3,
    );
    const c = cluster.client();
    await c.connect();
    try {
      expect(await c.hlen('{svc-ai-search:content}:items')).toBe(3);
      expect(await c.xlen('{svc-ai-search:content}:changes')).toBe(2);
    } finally {
      c.disconnect();
    }
    const health = (await request(a.app).get('/health')).body;
    expect(health).toMatchObject({ status: 'ok', kvstore: 'connected', kvstore_mode: 'cluster' });
  });

  it('deletes through both replicas interleaved with writes and patches: one slot (no CROSSSLOT), gone on both, tombstones kept', async () => {
    const ca = (a.deps.features as FeatureSet).context.content;
    const cb = (b.deps.features as FeatureSet).context.content;
    const ids = Array.from({ length: 20 }, (_, i) => `c-${i}`);
    await ca.ingest(ids.map((id) => ({ id, type: 'article' as const, title: id, body: `Okapis ${id}` })));
    await waitFor('b to hold them', async () => cb.size === 20);
    await Promise.all([
      ca.write({ delete: ids.slice(0, 5) }),
      cb.write({ delete: ids.slice(5, 10) }),
      cb.ingest(ids.slice(10, 15).map((id) => ({ id, type: 'article' as const, title: id, body: `patched ${id}` }))),
    ]);
    for (const t of [a, b]) {
      await waitFor(
        'the deletes to reach every replica',
        async () => (await request(t.app).get('/api/v1/articles')).body.total === 10,
      );
      for (const id of ids.slice(0, 10)) expect((await request(t.app).get(`/api/v1/articles/${id}`)).status).toBe(404);
      await waitFor(
        'the patches too',
        async () => (await request(t.app).get('/api/v1/articles/c-12')).body.body === 'patched c-12',
      );
    }
    const c = cluster.client();
    await c.connect();
    try {
      expect(await c.hlen('{svc-ai-search:content}:items')).toBe(10);
      expect(await c.zcard('{svc-ai-search:content}:deleted')).toBe(10);
    } finally {
      c.disconnect();
    }
  });

  it('the content master killed and restarted empty: reads never 5xx, and the replicas write their content back', async () => {
    await request(a.app).post('/api/ingest').send(item('survivor', 'Lichens are partnerships.'));
    await waitFor('b to index it', async () => (await request(b.app).get('/api/v1/articles/survivor')).status === 200);
    const c = cluster.client();
    await c.connect();
    const slot = Number(await c.call('CLUSTER', 'KEYSLOT', '{svc-ai-search:content}:items'));
    const slots = (await c.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
    c.disconnect();
    const port = slots.find(([lo, hi]) => slot >= lo && slot <= hi)![2][1];
    const index = cluster.nodes.findIndex((n) => n.port === port);
    await cluster.kill(index);
    for (let i = 0; i < 10; i++) {
      const r = await request(i % 2 ? b.app : a.app).get('/api/v1/articles/survivor');
      expect(r.status).toBe(200);
      expect((await request(a.app).get('/api/search?q=lichen')).status).toBe(200);
    }
    await cluster.restart(index);
    const after = cluster.client();
    await after.connect();
    try {
      await waitFor(
        'the lost item written back',
        async () => (await after.hexists('{svc-ai-search:content}:items', 'survivor')) === 1,
        { timeoutMs: 30_000 },
      );
    } finally {
      after.disconnect();
    }
  }, 90_000);
});
