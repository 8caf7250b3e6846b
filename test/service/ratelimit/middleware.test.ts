import express from 'express';
import { Registry } from 'prom-client';
import request from 'supertest';
import { parseSettings, type SettingsInput } from '../../../configs';
import { ManualClock } from '../../helpers/manual-clock';
import { MemoryDecisionStore } from '../../../service/ratelimit/memory-decision-store';
import { rateLimitMiddleware } from '../../../service/ratelimit/middleware';
import { TierResolver } from '../../../service/ratelimit/tiers';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { captureLogger, stubFeatures } from './helpers';
import { METRICS } from '../../../contract';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const T0S = T0 / 1000;

/** Production defaults (no multiplier): search 60/60 s burst 15, ip 100/60 s burst 20, upload 10/60 s burst 5. */
async function app(input: SettingsInput = {}, logLevel?: 'debug') {
  const log = captureLogger(logLevel);
  const t = await buildTestApp(
    { ...input, service: { environment: 'production', ...input.service } },
    { features: stubFeatures(), logger: log.logger },
  );
  t.clock.set(T0);
  return { t, log };
}

const OPERATIONAL = [
  '/health',
  '/health/ready',
  '/health/live',
  '/metrics',
  '/api/rate-limit',
  '/api/metrics/prometheus',
  '/api/health',
];

describe('rate-limit middleware', () => {
  let t: TestApp;
  let log: ReturnType<typeof captureLogger>;
  beforeEach(async () => {
    ({ t, log } = await app());
  });
  afterEach(() => t.close());

  it('sets exact headers on a protected endpoint and answers 429 with the §2.5 body when the search tier is exhausted', async () => {
    const first = await request(t.app).get('/api/search?q=x');
    expect(first.status).toBe(200);
    expect(first.headers).toMatchObject({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '14',
      'x-ratelimit-reset': String(T0S + 1),
      'ratelimit-policy': '"global";q=1000;w=3600, "ip";q=100;w=60, "search";q=60;w=60',
      ratelimit: '"global";r=99;t=4, "ip";r=19;t=1, "search";r=14;t=1',
    });
    expect(first.headers['retry-after']).toBeUndefined();
    for (let i = 2; i <= 15; i++) {
      const r = await request(t.app).get('/api/search');
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-remaining']).toBe(String(15 - i));
    }
    const refused = await request(t.app).get('/api/search');
    expect(refused.status).toBe(429);
    expect(refused.headers).toMatchObject({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(T0S + 15),
      'retry-after': '1',
    });
    expect(refused.body).toEqual({
      error: 'rate_limit_exceeded',
      message: 'Rate limit exceeded for the search tier (60 requests per 60 s, burst 15); retry in 1 s',
      retry_after: 1,
    });
    // One second later exactly one more request fits.
    t.clock.advance(1000);
    expect((await request(t.app).get('/api/search')).status).toBe(200);
    expect((await request(t.app).get('/api/search')).status).toBe(429);
  });

  it('a refused request consumes nothing: the ip tier only counts what was admitted', async () => {
    for (let i = 0; i < 15; i++) await request(t.app).get('/api/search');
    for (let i = 0; i < 10; i++) expect((await request(t.app).get('/api/search')).status).toBe(429);
    // A path no route takes (IP only): 15 of the ip tier's 20 were used by the admitted searches, none by the refusals.
    const other = await request(t.app).get('/api/v1/chat');
    expect(other.headers['x-ratelimit-limit']).toBe('100');
    expect(other.headers['x-ratelimit-remaining']).toBe('4');
    expect(other.headers.ratelimit).toBe('"ip";r=4;t=10');
    // The global tier saw the 15 admitted searches only.
    const search = await request(t.app).get('/api/search');
    expect(search.status).toBe(429);
    expect(search.headers.ratelimit).toBe('"global";r=85;t=54, "ip";r=4;t=10, "search";r=0;t=15');
  });

  it('limits unknown paths by the ip tier alone (404s carry the headers; the global tier is not charged)', async () => {
    const res = await request(t.app).get('/no/such/thing');
    expect(res.status).toBe(404);
    expect(res.headers['x-ratelimit-limit']).toBe('100');
    expect(res.headers['x-ratelimit-remaining']).toBe('19');
    expect(res.headers['ratelimit-policy']).toBe('"ip";q=100;w=60');
    const real = await request(t.app).get('/api/search');
    expect(real.headers.ratelimit).toMatch(/^"global";r=99;/);
  });

  it('puts GET /api/export/* and uploads in the upload tier (burst 5)', async () => {
    for (let i = 0; i < 3; i++) expect((await request(t.app).get('/api/export/items.json')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await request(t.app).post('/api/upload').send({})).status).toBe(200);
    const refused = await request(t.app).post('/api/ingest').send({});
    expect(refused.status).toBe(429);
    expect(refused.body.message).toContain('upload tier (10 requests per 60 s, burst 5)');
    expect(refused.body.retry_after).toBe(6);
    expect(refused.headers['retry-after']).toBe('6');
  });

  it('puts chat in the chat tier (burst 10), not GET /api/chat', async () => {
    const r = await request(t.app).post('/api/v1/chat').send({});
    expect(r.headers['x-ratelimit-limit']).toBe('30');
    expect(r.headers['x-ratelimit-remaining']).toBe('9');
    expect((await request(t.app).get('/api/chat')).headers['x-ratelimit-limit']).toBe('100');
  });

  it('never limits the operational endpoints, and sets no headers on them', async () => {
    for (let i = 0; i < 20; i++) await request(t.app).get('/api/other');
    expect((await request(t.app).get('/api/other')).status).toBe(429);
    for (const path of OPERATIONAL) {
      for (let i = 0; i < 3; i++) {
        const res = await request(t.app).get(path);
        expect(res.status).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
        expect(res.headers['retry-after']).toBeUndefined();
      }
    }
  });

  it('reports backend "memory" without a store URL: /api/rate-limit, /health and the gauge', async () => {
    expect((await request(t.app).get('/api/rate-limit')).body.backend).toBe('memory');
    expect((await request(t.app).get('/health')).body).toMatchObject({
      rate_limit: 'enabled',
      rate_limit_backend: 'memory',
    });
    const text = (await request(t.app).get('/api/metrics/prometheus')).text;
    expect(text).toContain(`${METRICS.rateLimitBackend}{backend="kvstore"} 0`);
    expect(text).toContain(`${METRICS.rateLimitBackend}{backend="memory"} 1`);
  });

  it('counts verdicts per tier, near-limit requests and decision times', async () => {
    for (let i = 0; i < 16; i++) await request(t.app).get('/api/search');
    const text = (await request(t.app).get('/api/metrics/prometheus')).text;
    const value = (series: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`${series} `))
          ?.split(' ')[1],
      );
    expect(value(`${METRICS.rateLimitRequestsTotal}{tier="global",result="allowed"}`)).toBe(16);
    expect(value(`${METRICS.rateLimitRequestsTotal}{tier="ip",result="allowed"}`)).toBe(16);
    expect(value(`${METRICS.rateLimitRequestsTotal}{tier="search",result="allowed"}`)).toBe(15);
    expect(value(`${METRICS.rateLimitRequestsTotal}{tier="search",result="refused"}`)).toBe(1);
    expect(value(`${METRICS.rateLimitRequestsTotal}{tier="chat",result="allowed"}`)).toBe(0);
    // search: used/burst >= 0.8 from the 12th request (12/15) to the 15th: 4 requests.
    expect(value(`${METRICS.rateLimitNearLimitTotal}{tier="search"}`)).toBe(4);
    expect(value(`${METRICS.rateLimitNearLimitTotal}{tier="ip"}`)).toBe(0);
    expect(value(`${METRICS.rateLimitStoreErrorsTotal}`)).toBe(0);
    expect(value(`${METRICS.rateLimitDecision}_count{backend="memory"}`)).toBe(16);
  });

  it('logs each refusal with tier, key and path (RATE_LIMIT_LOG_EXCEEDED)', async () => {
    for (let i = 0; i < 17; i++) await request(t.app).get('/api/search?q=1');
    const exceeded = log.lines.filter((l) => l.msg === 'rate limit exceeded');
    expect(exceeded).toHaveLength(2);
    expect(exceeded[0]).toMatchObject({
      level: 30,
      component: 'ratelimit',
      tier: 'search',
      key: 'ratelimit:search:127.0.0.1',
      client: '127.0.0.1',
      method: 'GET',
      path: '/api/search',
      retry_after: 1,
    });
    expect(log.lines.filter((l) => l.msg === 'rate limit decision')).toHaveLength(0);
  });
});

describe('rate-limit middleware settings', () => {
  it('RATELIMIT_ENABLED=false: nothing limited, no headers, /health says disabled', async () => {
    const { t } = await app({ rateLimit: { enabled: false } });
    try {
      for (let i = 0; i < 40; i++) {
        const r = await request(t.app).get('/api/search');
        expect(r.status).toBe(200);
        expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      }
      expect((await request(t.app).get('/health')).body.rate_limit).toBe('disabled');
    } finally {
      await t.close();
    }
  });

  it('RATE_LIMIT_LOG_EXCEEDED=false logs no refusal; RATE_LIMIT_LOG_ALL logs every decision', async () => {
    const { t, log } = await app({ rateLimit: { logExceeded: false, logAll: true } });
    try {
      for (let i = 0; i < 16; i++) await request(t.app).get('/api/search');
      expect(log.lines.filter((l) => l.msg === 'rate limit exceeded')).toHaveLength(0);
      const all = log.lines.filter((l) => l.msg === 'rate limit decision');
      expect(all).toHaveLength(16);
      expect(all[0]).toMatchObject({ tier: 'search', allowed: true, limit: 60, remaining: 14, path: '/api/search' });
      expect(all[15]).toMatchObject({ tier: 'search', allowed: false, remaining: 0 });
    } finally {
      await t.close();
    }
  });

  it('RATE_LIMIT_LOG_WARNINGS warns once when a tier crosses the alert threshold', async () => {
    const { t, log } = await app({ rateLimit: { logWarnings: true, alertThreshold: 0.5 } });
    try {
      for (let i = 0; i < 15; i++) await request(t.app).get('/api/search');
      const warned = log.lines.filter((l) => l.msg === 'rate limit usage passed the alert threshold');
      // search: 8 of 15 used is the first at >= 0.5; ip: 10 of 20.
      expect(warned.map((l) => [l.tier, l.used])).toEqual([
        ['search', 8],
        ['ip', 10],
      ]);
      expect(warned[0]).toMatchObject({ level: 40, key: 'ratelimit:search:127.0.0.1', burst: 15, threshold: 0.5 });
      // Draining below the threshold and crossing it again warns again.
      t.clock.advance(60000);
      for (let i = 0; i < 8; i++) await request(t.app).get('/api/search');
      expect(log.lines.filter((l) => l.msg === 'rate limit usage passed the alert threshold')).toHaveLength(3);
    } finally {
      await t.close();
    }
  });

  it('RATE_LIMIT_ENABLE_METRICS=false registers no rate-limit metric', async () => {
    const registry = new Registry();
    const t = await buildTestApp({ rateLimit: { enableMetrics: false } }, { registry, features: stubFeatures() });
    try {
      await request(t.app).get('/api/search');
      expect(await registry.metrics()).not.toContain('rate_limit');
    } finally {
      await t.close();
    }
  });

  it('applies the environment multiplier (development: ×5)', async () => {
    const { t } = await app({ service: { environment: 'development' } });
    try {
      const r = await request(t.app).get('/api/search');
      expect(r.headers['x-ratelimit-limit']).toBe('300');
      expect(r.headers['x-ratelimit-remaining']).toBe('74');
    } finally {
      await t.close();
    }
  });

  it('TRUST_PROXY=0 ignores a spoofed X-Forwarded-For; a trusted proxy hop keys by the forwarded client', async () => {
    const direct = await app();
    try {
      for (let i = 0; i < 20; i++) await request(direct.t.app).get('/api/x').set('X-Forwarded-For', `203.0.113.${i}`);
      const r = await request(direct.t.app).get('/api/x').set('X-Forwarded-For', '198.51.100.77');
      expect(r.status).toBe(429);
    } finally {
      await direct.t.close();
    }
    const proxied = await app({ service: { trustProxy: ['loopback'] } });
    try {
      for (let i = 0; i < 20; i++) await request(proxied.t.app).get('/api/x').set('X-Forwarded-For', '203.0.113.5');
      expect((await request(proxied.t.app).get('/api/x').set('X-Forwarded-For', '203.0.113.5')).status).toBe(429);
      expect((await request(proxied.t.app).get('/api/x').set('X-Forwarded-For', '203.0.113.6')).status).toBe(200);
      // IPv6: one /64 is one client, whatever the interface id.
      for (let i = 1; i <= 20; i++)
        await request(proxied.t.app)
          .get('/api/x')
          .set('X-Forwarded-For', `2001:db8:5:5::${i.toString(16)}`);
      expect((await request(proxied.t.app).get('/api/x').set('X-Forwarded-For', '2001:db8:5:5:ffff::1')).status).toBe(
        429,
      );
      expect((await request(proxied.t.app).get('/api/x').set('X-Forwarded-For', '2001:db8:5:6::1')).status).toBe(200);
      // A port does not make a new client; garbage is not an identity (the socket address is).
      for (let port = 1000; port < 1020; port++)
        await request(proxied.t.app).get('/api/x').set('X-Forwarded-For', `198.51.100.7:${port}`);
      expect((await request(proxied.t.app).get('/api/x').set('X-Forwarded-For', '198.51.100.7:2000')).status).toBe(429);
      for (let i = 0; i < 20; i++)
        await request(proxied.t.app)
          .get('/api/x')
          .set('X-Forwarded-For', `[2001:db8:7::${i + 1}]:443`);
      expect((await request(proxied.t.app).get('/api/x').set('X-Forwarded-For', '2001:db8:7::99')).status).toBe(429);
      for (let i = 0; i < 20; i++)
        await request(proxied.t.app)
          .get('/api/x')
          .set('X-Forwarded-For', `${String(i).repeat(4)}-garbage`);
      const garbage = await request(proxied.t.app).get('/api/x').set('X-Forwarded-For', 'g'.repeat(8192));
      expect(garbage.status).toBe(429);
      expect(garbage.body.error).toBe('rate_limit_exceeded');
    } finally {
      await proxied.t.close();
    }
  });
});

describe('the global tier and 404 floods (memory store)', () => {
  /** The real functional API (real 404s), production limits, a frozen clock. */
  const realApp = async (input: SettingsInput) => {
    const t = await buildTestApp({ ...input, service: { environment: 'production', ...input.service } });
    t.clock.set(T0);
    return { t };
  };

  it('requests no route takes are charged to the ip tier only: a flood from many clients leaves the global tier whole', async () => {
    const { t } = await realApp({
      service: { trustProxy: ['loopback'] },
      rateLimit: {
        tiers: {
          global: { limit: 10, windowSeconds: 3600, burst: 10 },
          ip: { limit: 100, windowSeconds: 60, burst: 3 },
        },
      },
    });
    try {
      const scans = ['/wp-admin/setup.php', '/api/search/x', '/.env', '/api/v2/search'];
      for (let i = 0; i < 200; i++) {
        const r = await request(t.app)
          .get(scans[i % scans.length])
          .set('X-Forwarded-For', `203.0.113.${i % 50}`);
        expect(r.status).toBe(i < 150 ? 404 : 429);
      }
      // The global tier (burst 10) is untouched: ten real requests from new clients pass, the eleventh is refused by it.
      for (let i = 0; i < 10; i++) {
        const r = await request(t.app).get('/api/search?q=x').set('X-Forwarded-For', `192.0.2.${i}`);
        expect(r.status).toBe(200);
        expect(r.headers.ratelimit).toMatch(new RegExp(`^"global";r=${9 - i};`));
      }
      const refused = await request(t.app).get('/api/search?q=x').set('X-Forwarded-For', '192.0.2.99');
      expect(refused.status).toBe(429);
      expect(refused.body.message).toContain('global tier');
    } finally {
      await t.close();
    }
  });

  it('a scanner limits itself: its 404s drain its own ip bucket, shared with its real requests', async () => {
    const { t } = await realApp({ rateLimit: { tiers: { ip: { limit: 1, windowSeconds: 3600, burst: 5 } } } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await request(t.app).get(`/scan/${i}`)).status);
      expect(statuses).toEqual([404, 404, 404, 404, 404, 429, 429]);
      const real = await request(t.app).get('/api/search?q=x');
      expect(real.status).toBe(429);
      expect(real.body.message).toContain('ip tier');
    } finally {
      await t.close();
    }
  });
});

describe('rate-limit middleware when the store itself fails', () => {
  it('lets the request through unlimited and logs the error, explicitly (never a 5xx)', async () => {
    const log = captureLogger();
    const settings = parseSettings({ service: { environment: 'production' } });
    const failing = { decide: () => Promise.reject(new Error('boom')), backend: () => 'memory' as const };
    const app = express();
    app.use(
      rateLimitMiddleware({
        settings: settings.rateLimit,
        resolver: new TierResolver(settings.rateLimit),
        store: failing,
        logger: log.logger,
      }),
    );
    app.get('/api/search', (_req, res) => {
      res.json({ ok: true });
    });
    const r = await request(app).get('/api/search');
    expect(r.status).toBe(200);
    expect(r.headers['x-ratelimit-limit']).toBeUndefined();
    expect(log.at(50)).toEqual([
      expect.objectContaining({ msg: 'rate limiter failed; request let through unlimited', path: '/api/search' }),
    ]);
  });
});

describe('rate-limit middleware with a store that decides at once (the memory store)', () => {
  const settings = parseSettings({ service: { environment: 'production' } });
  const resolver = new TierResolver(settings.rateLimit);

  it('decides, sets the headers and calls next() within the call: no promise, no microtask', () => {
    const memory = new MemoryDecisionStore(new ManualClock(1_700_000_000_000), 100);
    const store = {
      decide: () => Promise.reject(new Error('not used')),
      decideAtOnce: memory.decideAtOnce.bind(memory),
      backend: () => 'memory' as const,
    };
    const mw = rateLimitMiddleware({ settings: settings.rateLimit, resolver, store, logger: captureLogger().logger });
    const headers = new Map<string, string>();
    const res = { headersSent: false, setHeader: (k: string, v: string) => headers.set(k.toLowerCase(), String(v)) };
    const req = { path: '/api/search', method: 'GET', ip: '192.0.2.1', socket: { remoteAddress: '192.0.2.1' } };
    const next = jest.fn();
    mw(req as never, res as never, next);
    expect(next).toHaveBeenCalledWith();
    expect(headers.get('x-ratelimit-limit')).toBeDefined();
    expect(memory.size).toBe(3);
  });

  it("a later request of the same event-loop turn is decided at once and acted on at the turn's end (turn-burst.ts)", async () => {
    const memory = new MemoryDecisionStore(new ManualClock(1_700_000_000_000), 100);
    const store = {
      decide: () => Promise.reject(new Error('not used')),
      decideAtOnce: memory.decideAtOnce.bind(memory),
      backend: () => 'memory' as const,
    };
    const mw = rateLimitMiddleware({ settings: settings.rateLimit, resolver, store, logger: captureLogger().logger });
    const call = (ip: string) => {
      const headers = new Map<string, string>();
      const res = { headersSent: false, setHeader: (k: string, v: string) => headers.set(k.toLowerCase(), String(v)) };
      const next = jest.fn();
      mw({ path: '/api/search', method: 'GET', ip, socket: { remoteAddress: ip } } as never, res as never, next);
      return { headers, next };
    };
    const first = call('192.0.2.1');
    const second = call('192.0.2.2');
    expect(first.next).toHaveBeenCalledWith();
    expect(memory.size).toBe(5); // both decided: the global key and two keys per client
    expect(second.next).not.toHaveBeenCalled();
    expect(second.headers.size).toBe(0);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(second.next).toHaveBeenCalledWith();
    expect(second.headers.get('x-ratelimit-remaining')).toBeDefined();
  });

  it('a store that throws at once lets the request through unlimited and logs the error', async () => {
    const log = captureLogger();
    const throwing = {
      decide: () => Promise.reject(new Error('not used')),
      decideAtOnce: () => {
        throw new Error('boom');
      },
      backend: () => 'memory' as const,
    };
    const app = express();
    app.use(rateLimitMiddleware({ settings: settings.rateLimit, resolver, store: throwing, logger: log.logger }));
    app.get('/api/search', (_req, res) => {
      res.json({ ok: true });
    });
    const r = await request(app).get('/api/search');
    expect(r.status).toBe(200);
    expect(r.headers['x-ratelimit-limit']).toBeUndefined();
    expect(log.at(50)).toEqual([
      expect.objectContaining({ msg: 'rate limiter failed; request let through unlimited', path: '/api/search' }),
    ]);
  });
});
