import request from 'supertest';
import type { SettingsInput } from '../../../../configs';
import { buildTestApp, type TestApp } from '../../../helpers/app';
import { RedisCluster } from '../../../../tools/harness/redis-cluster';
import { RedisServer } from '../../../../tools/harness/redis';
import { waitFor } from '../../../../tools/harness/ports';
import { captureLogger, stubFeatures } from '../helpers';
import { METRICS } from '../../../../contract';

/** ip tier: 5 at once, then 1 per hour (real time between requests never refills it). */
const SLOW_IP = { ip: { limit: 1, windowSeconds: 3600, burst: 5 } };
/** A routed path: global + ip + search. */
const PATH = '/api/v1/articles';

interface Target {
  readonly name: string;
  input(): SettingsInput['kvstore'];
}

async function limiterApp(kvstore: SettingsInput['kvstore'], tiers: Record<string, unknown> = {}) {
  const log = captureLogger();
  const t = await buildTestApp(
    {
      service: { environment: 'production' },
      kvstore: { commandTimeoutMs: 1000, connectTimeoutMs: 2000, ...kvstore },
      rateLimit: { tiers: { ...SLOW_IP, ...tiers } },
    },
    { features: stubFeatures(), logger: log.logger },
  );
  return { t, log };
}

const backendOf = async (t: TestApp) => (await request(t.app).get('/api/rate-limit')).body.backend as string;

describe('two replicas share limits on standalone and on a three-master Redis Cluster (real redis-server)', () => {
  let server: RedisServer;
  let cluster: RedisCluster;
  beforeAll(async () => {
    server = await RedisServer.start();
    cluster = await RedisCluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await server?.stop();
  });

  /** KVSTORE_URL = the first node, KVSTORE_NODES = the others, KVSTORE_MODE = cluster. */
  const clusterInput = (): SettingsInput['kvstore'] => ({
    url: cluster.url(0),
    topology: { mode: 'cluster', nodes: cluster.seeds.slice(1) },
  });
  const targets: Target[] = [
    { name: 'standalone', input: () => ({ url: server.url }) },
    { name: 'cluster', input: clusterInput },
  ];

  describe.each(targets.map((t) => [t.name, t] as const))('%s', (name, target) => {
    beforeEach(async () => {
      if (name === 'cluster') await cluster.flushAll();
      else {
        const c = (await limiterApp({ url: server.url })).t;
        await c.deps.kvstore.client?.flushall();
        await c.close();
      }
    });

    it('two app instances share one limit: 5 admitted in all, then 429 on both', async () => {
      const a = await limiterApp(target.input());
      const b = await limiterApp(target.input());
      try {
        expect(await backendOf(a.t)).toBe('kvstore');
        const statuses: number[] = [];
        for (let i = 0; i < 8; i++) statuses.push((await request((i % 2 ? b : a).t.app).get(PATH)).status);
        expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
        expect((await request(b.t.app).get(PATH)).headers['x-ratelimit-remaining']).toBe('0');
        const health = (await request(a.t.app).get('/health')).body;
        expect(health).toMatchObject({
          status: 'ok',
          kvstore: 'connected',
          kvstore_mode: name,
          rate_limit_backend: 'kvstore',
        });
      } finally {
        await a.t.close();
        await b.t.close();
      }
    });

    it('the global tier is shared too: 10 requests across both replicas, 6 admitted', async () => {
      // Global 6 at once; ip generous: the global tier binds, across both replicas.
      const tiers = {
        global: { limit: 1, windowSeconds: 3600, burst: 6 },
        ip: { limit: 100, windowSeconds: 60, burst: 100 },
      };
      const a = await limiterApp(target.input(), tiers);
      const b = await limiterApp(target.input(), tiers);
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 10; i++) statuses.push((await request((i % 2 ? b : a).t.app).get(PATH)).status);
        expect(statuses.filter((s) => s === 200)).toHaveLength(6);
        expect(statuses.slice(6)).toEqual([429, 429, 429, 429]);
      } finally {
        await a.t.close();
        await b.t.close();
      }
    });
  });

  it('cluster: a refusal by the global tier is refunded on the client tiers (a refused request is charged nothing)', async () => {
    await cluster.flushAll();
    const tiers = {
      global: { limit: 1, windowSeconds: 3600, burst: 2 },
      ip: { limit: 1, windowSeconds: 3600, burst: 10 },
    };
    const a = await limiterApp(clusterInput(), tiers);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await request(a.t.app).get(PATH)).status);
      expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
      const c = cluster.client();
      await c.connect();
      try {
        // The hash-tagged ip key holds the 2 admitted requests only: each refused one was given back.
        const ip = await waitFor('the refunds', async () => {
          const v = await c.get('ratelimit:ip:{127.0.0.1}');
          return v && Number(v.split(' ')[1]) <= 2 * 3_600_000 ? v : false;
        });
        expect(Number(ip.split(' ')[1])).toBeGreaterThan(3_600_000 - 10_000);
        expect(await c.exists('ratelimit:ip:127.0.0.1')).toBe(0);
      } finally {
        c.disconnect();
      }
    } finally {
      await a.t.close();
    }
  });

  it('cluster: a master killed and restarted: 0 × 5xx, fallback and return logged, health degraded then connected', async () => {
    await cluster.flushAll();
    const { t, log } = await limiterApp(clusterInput(), { ip: { limit: 1000, windowSeconds: 60, burst: 1000 } });
    try {
      expect((await request(t.app).get(PATH)).status).toBe(200);
      // The global key's master: killing it makes every decision fail over to memory.
      const globalNode = await (async () => {
        const c = cluster.client();
        await c.connect();
        try {
          const slot = Number(await c.call('CLUSTER', 'KEYSLOT', 'ratelimit:global'));
          const slots = (await c.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
          const port = slots.find(([lo, hi]) => slot >= lo && slot <= hi)![2][1];
          return cluster.nodes.findIndex((n) => n.port === port);
        } finally {
          c.disconnect();
        }
      })();
      await cluster.kill(globalNode);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await request(t.app).get(PATH)).status);
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(await backendOf(t)).toBe('memory');
      const degraded = (await request(t.app).get('/health')).body;
      expect(degraded).toMatchObject({ status: 'degraded', kvstore_mode: 'cluster', rate_limit_backend: 'memory' });
      expect(['degraded', 'unresponsive', 'disconnected']).toContain(degraded.kvstore);
      const text = (await request(t.app).get('/api/metrics/prometheus')).text;
      expect(text).toContain(`${METRICS.kvstoreState}{store="kvstore",mode="cluster",state="connected"} 0`);

      await cluster.restart(globalNode);
      await waitFor('rate limits back on the cluster', async () => (await backendOf(t)) === 'kvstore', {
        timeoutMs: 30_000,
      });
      for (let i = 0; i < 5; i++) expect((await request(t.app).get(PATH)).status).toBe(200);
      await waitFor(
        'health connected',
        async () => (await request(t.app).get('/health')).body.kvstore === 'connected',
        { timeoutMs: 30_000 },
      );
      const warnings = log.at(40).map((l) => l.msg);
      expect(warnings).toEqual(
        expect.arrayContaining([
          expect.stringContaining('falls back to the in-memory store'),
          'rate limiting is back on the kvstore',
        ]),
      );
    } finally {
      await t.close();
    }
  }, 90_000);
});
