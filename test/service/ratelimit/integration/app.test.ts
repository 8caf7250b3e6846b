import Redis from 'ioredis';
import request from 'supertest';
import type { SettingsInput } from '../../../../configs';
import { buildTestApp, type TestApp } from '../../../helpers/app';
import { redisServerForSuite } from '../../../helpers/redis-server';
import { freePort } from '../../../../tools/harness/ports';
import { RedisServer } from '../../../../tools/harness/redis';
import { captureLogger, stubFeatures, until } from '../helpers';
import { METRICS } from '../../../../contract';

/** ip tier: 5 at once, then 1 per hour (so real time between requests never refills it). */
const SLOW_IP = { ip: { limit: 1, windowSeconds: 3600, burst: 5 } };

/** Command and connect timeouts far above a loaded machine's stalls: only a real outage may switch to memory. */
async function appOn(url: string | undefined, input: SettingsInput = {}) {
  const log = captureLogger();
  const t = await buildTestApp(
    {
      ...input,
      service: { environment: 'production', ...input.service },
      kvstore: { url, commandTimeoutMs: 1000, connectTimeoutMs: 2000, ...input.kvstore },
      rateLimit: { ...input.rateLimit, tiers: { ...SLOW_IP, ...input.rateLimit?.tiers } },
    },
    { features: stubFeatures(), logger: log.logger },
  );
  return {
    t,
    log,
    warnings: () =>
      log
        .at(40)
        .filter((l) => l.component === 'ratelimit')
        .map((l) => l.msg),
  };
}

/** A routed path (the stub answers it 200): global + ip + search, where the slow ip tier binds first. */
const PATH = '/api/v1/articles';

const backendOf = async (t: TestApp) => (await request(t.app).get('/api/rate-limit')).body.backend as string;

describe('rate limiting across replicas and kvstore outages (real redis-server)', () => {
  const redis = redisServerForSuite({ lazyConnect: true, maxRetriesPerRequest: 1 });
  beforeEach(async () => {
    if (redis.client.status !== 'ready') await redis.client.connect().catch(() => undefined);
    await redis.client.flushall();
  });

  it('two app instances share one limit: 5 admitted in all, then 429 on both', async () => {
    const a = await appOn(redis.server.url);
    const b = await appOn(redis.server.url);
    try {
      expect(await backendOf(a.t)).toBe('kvstore');
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await request((i % 2 ? b : a).t.app).get(PATH)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
      const r = await request(b.t.app).get(PATH);
      expect(r.headers['x-ratelimit-remaining']).toBe('0');
      expect(await redis.client.exists('ratelimit:global', 'ratelimit:ip:127.0.0.1')).toBe(2);
    } finally {
      await a.t.close();
      await b.t.close();
    }
  });

  it('killing Redis: no 5xx, backend "memory", one warning; restarting it: back to "kvstore"', async () => {
    const { t, warnings } = await appOn(redis.server.url);
    try {
      expect(await backendOf(t)).toBe('kvstore');
      expect((await request(t.app).get(PATH)).status).toBe(200);
      redis.client.disconnect();
      await redis.server.kill();
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await request(t.app).get(PATH)).status);
      // Decided in memory, which starts afresh: 5 admitted, then refused. Never a 5xx.
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
      expect(await backendOf(t)).toBe('memory');
      const health = (await request(t.app).get('/health')).body;
      expect(health).toMatchObject({ rate_limit: 'enabled', rate_limit_backend: 'memory', kvstore: 'disconnected' });
      const text = (await request(t.app).get('/api/metrics/prometheus')).text;
      expect(text).toContain(`${METRICS.rateLimitBackend}{backend="memory"} 1`);
      expect(warnings()).toEqual([expect.stringContaining('falls back to the in-memory store')]);

      await redis.server.restart();
      await until('backend kvstore after restart', async () => (await backendOf(t)) === 'kvstore');
      // Redis came back empty (no persistence): a fresh shared bucket.
      expect((await request(t.app).get(PATH)).status).toBe(200);
      await redis.client.connect();
      expect(await redis.client.get('ratelimit:ip:127.0.0.1')).toMatch(/^\d+ \d+$/);
      expect(warnings()).toEqual([expect.stringContaining('falls back'), 'rate limiting is back on the kvstore']);
    } finally {
      await t.close();
    }
  });

  it('a hung Redis (SIGSTOP): requests time out to memory, no 5xx; SIGCONT: a probe switches back', async () => {
    const { t, warnings } = await appOn(redis.server.url);
    const pid = Number(/process_id:(\d+)/.exec(await redis.client.info('server'))![1]);
    try {
      expect((await request(t.app).get(PATH)).status).toBe(200);
      process.kill(pid, 'SIGSTOP');
      const first = await request(t.app).get(PATH);
      expect(first.status).toBe(200);
      expect(await backendOf(t)).toBe('memory');
      for (let i = 0; i < 10; i++) expect([200, 429]).toContain((await request(t.app).get(PATH)).status);
      const text = (await request(t.app).get('/api/metrics/prometheus')).text;
      expect(text).toMatch(new RegExp(`${METRICS.rateLimitStoreErrorsTotal} [1-9]`));
      process.kill(pid, 'SIGCONT');
      await until('backend kvstore after SIGCONT', async () => (await backendOf(t)) === 'kvstore');
      expect(warnings()).toEqual([expect.stringContaining('falls back'), 'rate limiting is back on the kvstore']);
    } finally {
      process.kill(pid, 'SIGCONT');
      await t.close();
    }
  });

  it('Redis unreachable at startup: memory from the start, then kvstore once it is up', async () => {
    const port = await freePort();
    const later = `redis://127.0.0.1:${port}`;
    const { t, warnings } = await appOn(later);
    let late: RedisServer | undefined;
    try {
      expect(await backendOf(t)).toBe('memory');
      for (let i = 0; i < 7; i++) expect([200, 429]).toContain((await request(t.app).get(PATH)).status);
      expect(warnings()).toHaveLength(1);
      late = await RedisServer.start({ port });
      await until('backend kvstore once Redis is up', async () => (await backendOf(t)) === 'kvstore');
      expect((await request(t.app).get(PATH)).status).toBe(200);
    } finally {
      await t.close();
      await late?.stop();
    }
  });

  it('TRUST_PROXY and IPv6 /64 keying hold through the kvstore', async () => {
    const direct = await appOn(redis.server.url);
    const proxied = await appOn(redis.server.url, { service: { trustProxy: 1 } });
    try {
      // No trusted proxy: a spoofed X-Forwarded-For is ignored, the socket address is the key.
      for (let i = 0; i < 6; i++) await request(direct.t.app).get(PATH).set('X-Forwarded-For', `203.0.113.${i}`);
      expect(await redis.client.keys('ratelimit:ip:*')).toEqual(['ratelimit:ip:127.0.0.1']);
      // One trusted hop: the forwarded address; IPv6 by its /64.
      for (let i = 1; i <= 5; i++) {
        expect((await request(proxied.t.app).get(PATH).set('X-Forwarded-For', `2001:db8:9:9::${i}`)).status).toBe(200);
      }
      expect((await request(proxied.t.app).get(PATH).set('X-Forwarded-For', '2001:db8:9:9:abcd::1')).status).toBe(429);
      expect((await request(proxied.t.app).get(PATH).set('X-Forwarded-For', '2001:db8:9:a::1')).status).toBe(200);
      expect((await redis.client.keys('ratelimit:ip:*')).sort()).toEqual([
        'ratelimit:ip:127.0.0.1',
        'ratelimit:ip:2001:db8:9:9::/64',
        'ratelimit:ip:2001:db8:9:a::/64',
      ]);
    } finally {
      await direct.t.close();
      await proxied.t.close();
    }
  });
});

describe('rate-limit store URLs (real redis-server)', () => {
  it('honours a password and a database number in the URL', async () => {
    const secured = await RedisServer.start({ password: 's3cret' });
    const { t } = await appOn(`${secured.url}/3`);
    const c = new Redis(`${secured.url}/3`);
    try {
      expect(await backendOf(t)).toBe('kvstore');
      await request(t.app).get(PATH);
      expect(await c.exists('ratelimit:ip:127.0.0.1')).toBe(1);
      await c.select(0);
      expect(await c.dbsize()).toBe(0);
    } finally {
      c.disconnect();
      await t.close();
      await secured.stop();
    }
  });

  it('RATELIMIT_STORAGE_URL takes precedence over KVSTORE_URL', async () => {
    const shared = await RedisServer.start();
    const dedicated = await RedisServer.start();
    const { t } = await appOn(shared.url, { rateLimit: { storageUrl: dedicated.url } });
    const s = new Redis(shared.url);
    const d = new Redis(dedicated.url);
    try {
      expect(await backendOf(t)).toBe('kvstore');
      await request(t.app).get(PATH);
      expect(await d.exists('ratelimit:global')).toBe(1);
      expect(await s.exists('ratelimit:global')).toBe(0);
    } finally {
      s.disconnect();
      d.disconnect();
      await t.close();
      await shared.stop();
      await dedicated.stop();
    }
  });
});

describe('404 floods and the global tier through the kvstore (real redis-server)', () => {
  it('requests no route takes never touch the global key; a forwarded port or garbage mints no key', async () => {
    const server = await RedisServer.start();
    const c = new Redis(server.url);
    const t = await buildTestApp(
      {
        service: { environment: 'production', trustProxy: 1 },
        kvstore: { url: server.url, commandTimeoutMs: 1000, connectTimeoutMs: 2000 },
        rateLimit: {
          tiers: {
            global: { limit: 10, windowSeconds: 3600, burst: 10 },
            ip: { limit: 1, windowSeconds: 3600, burst: 3 },
          },
        },
      },
      { logger: captureLogger().logger },
    );
    try {
      expect(await backendOf(t)).toBe('kvstore');
      const statuses: number[] = [];
      for (let i = 0; i < 100; i++) {
        const r = await request(t.app)
          .get(`/wp-admin/scan-${i}.php`)
          .set('X-Forwarded-For', `203.0.113.${i % 20}:${40000 + i}`);
        statuses.push(r.status);
      }
      expect(statuses.filter((s) => s === 404)).toHaveLength(60);
      expect(statuses.filter((s) => s === 429)).toHaveLength(40);
      expect(await c.exists('ratelimit:global')).toBe(0);
      // One key per client, not per port.
      expect(await c.keys('ratelimit:ip:203.0.113.*')).toHaveLength(20);
      await request(t.app).get('/nope').set('X-Forwarded-For', 'g'.repeat(8192));
      const keys = await c.keys('*');
      expect(keys.every((k) => k.length < 60)).toBe(true);
      expect(keys).toContain('ratelimit:ip:127.0.0.1');
      // Real requests find the global tier whole: ten pass, the eleventh is refused by it.
      for (let i = 0; i < 10; i++) {
        expect((await request(t.app).get('/api/search?q=x').set('X-Forwarded-For', `192.0.2.${i}`)).status).toBe(200);
      }
      const refused = await request(t.app).get('/api/search?q=x').set('X-Forwarded-For', '192.0.2.99');
      expect(refused.status).toBe(429);
      expect(refused.body.message).toContain('global tier');
    } finally {
      c.disconnect();
      await t.close();
      await server.stop();
    }
  });
});
