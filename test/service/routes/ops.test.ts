import request from 'supertest';
import { waitFor } from '../../../tools/harness/ports';
import { RedisServer } from '../../../tools/harness/redis';
import { pauseRedis, resumeRedis } from '../../../tools/harness/redis-pause';
import { buildTestApp, type TestApp } from '../../helpers/app';

describe('operational endpoints', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ service: { environment: 'production' } });
  });
  afterEach(() => t.close());

  it('GET /api/metrics/prometheus answers text/plain exposition version 0.0.4', async () => {
    const res = await request(t.app).get('/api/metrics/prometheus');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('# TYPE svc_ai_search_requests_total counter');
  });

  it('counts functional requests but not operational ones', async () => {
    await request(t.app).get('/health');
    await request(t.app).get('/api/metrics/prometheus');
    await request(t.app).get('/no/such/path');
    const res = await request(t.app).get('/metrics');
    expect(res.body.requests).toMatchObject({ total: 1, successful: 0, failed: 1, success_rate: 0 });
    expect(res.body.requests_by_type.other.total).toBe(1);
  });

  it.each(['/health', '/api/health'])('GET %s gives the health record with rate_limit', async (path) => {
    const res = await request(t.app).get(path);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'ok',
      service: 'svc-ai-search-backend',
      environment: 'production',
      kvstore: 'not_configured',
      rate_limit: 'enabled',
      rate_limit_backend: 'memory',
      performance_grade: 'A',
    });
    expect(res.body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(res.body.content).toEqual({
      store: 'file',
      items: 0,
      store_losses: { events: 0, items: 0 },
      compaction: { status: 'ok', failures: 0, last_failure_at: null, last_error: null, next_retry_at: null },
      writes: { status: 'ok', failures: 0, last_failure_at: null, last_error: null },
    });
    expect(typeof res.body.uptime_seconds).toBe('number');
    expect(['enabled', 'disabled', 'unknown']).toContain(res.body.rate_limit);
  });

  it('rate_limit is "disabled" when RATELIMIT_ENABLED=false', async () => {
    const off = await buildTestApp({ rateLimit: { enabled: false } });
    try {
      expect((await request(off.app).get('/health')).body.rate_limit).toBe('disabled');
    } finally {
      await off.close();
    }
  });

  it('GET /health/live is 200 while the process serves', async () => {
    const res = await request(t.app).get('/health/live');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'alive' });
  });

  it('GET /health/ready is 503 while starting, 200 when ready, 503 while draining', async () => {
    const starting = await buildTestApp({}, { start: false });
    try {
      const r1 = await request(starting.app).get('/health/ready');
      expect(r1.status).toBe(503);
      expect(r1.body).toMatchObject({ status: 'not_ready', state: 'starting' });
    } finally {
      await starting.close();
    }
    expect((await request(t.app).get('/health/ready')).status).toBe(200);
    t.deps.lifecycle.markDraining();
    const r3 = await request(t.app).get('/health/ready');
    expect(r3.status).toBe(503);
    expect(r3.body.state).toBe('draining');
  });

  it('GET /metrics gives a JSON snapshot of the same statistics', async () => {
    const res = await request(t.app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      requests: { total: 0, successful: 0, failed: 0, success_rate: 100, avg_response_time_ms: 0, window_seconds: 300 },
      total_tokens_used: 0,
      health_score: 100,
      performance_grade: 'A',
      cache: { size: 0, maxsize: 1000, usage_percent: 0 },
    });
    expect(Object.keys(res.body.requests_by_type)).toEqual([
      'search',
      'chat',
      'ingest',
      'upload',
      'export',
      'eval',
      'content',
      'other',
    ]);
  });

  it('GET /api/rate-limit in production gives exactly the record of spec §2.2, plus the warnings about the limits', async () => {
    const res = await request(t.app).get('/api/rate-limit');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      rate_limits: {
        global: { limit: 1000, window_seconds: 3600, burst: 100 },
        ip: { limit: 100, window_seconds: 60, burst: 20 },
        search: { limit: 60, window_seconds: 60, burst: 15 },
        upload: { limit: 10, window_seconds: 60, burst: 5 },
      },
      backend: 'memory',
      client_ip: expect.any(String),
      environment: 'production',
      alert_threshold: 0.8,
      log_warnings: false,
      log_all: false,
      // The spec's defaults let one client empty the global tier: (100 - 20) / (100/60 - 1000/3600) s.
      warnings: [
        {
          code: 'one_client_can_exhaust_global',
          message: expect.stringContaining('in about 58 s'),
          exhausts_after_seconds: 57.6,
        },
      ],
    });
    expect(res.body.client_ip).toMatch(/^(127\.0\.0\.1|::\/64)$/); // never the ::ffff: dual-stack form; IPv6 as the limiter's /64 key
  });

  it('GET /api/rate-limit in development shows five times the limits', async () => {
    const dev = await buildTestApp({ service: { environment: 'development' }, rateLimit: { logWarnings: true } });
    try {
      const res = await request(dev.app).get('/api/rate-limit');
      expect(res.body.rate_limits).toEqual({
        global: { limit: 5000, window_seconds: 3600, burst: 500 },
        ip: { limit: 500, window_seconds: 60, burst: 100 },
        search: { limit: 300, window_seconds: 60, burst: 75 },
        upload: { limit: 50, window_seconds: 60, burst: 25 },
      });
      expect(res.body.environment).toBe('development');
      expect(res.body.log_warnings).toBe(true);
      for (const tier of Object.values(res.body.rate_limits) as Array<Record<string, number>>) {
        for (const v of Object.values(tier)) expect(Number.isInteger(v)).toBe(true);
      }
    } finally {
      await dev.close();
    }
  });
});

describe('health while the kvstore is paused', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('/health says degraded and kvstore "unresponsive" while commands time out; /health/ready stays 200; then ok again', async () => {
    const t = await buildTestApp({ kvstore: { url: redis.url, commandTimeoutMs: 300 }, rateLimit: { enabled: false } });
    try {
      expect((await request(t.app).get('/health')).body).toMatchObject({ status: 'ok', kvstore: 'connected' });
      pauseRedis(redis);
      try {
        const health = await waitFor(
          'a degraded /health',
          async () => {
            const body = (await request(t.app).get('/health')).body as Record<string, unknown>;
            return body.status === 'degraded' && body;
          },
          { timeoutMs: 15_000, intervalMs: 50 },
        );
        expect(health).toMatchObject({ status: 'degraded', kvstore: 'unresponsive' });
        expect(health.health_score as number).toBeLessThanOrEqual(90);
        const ready = await request(t.app).get('/health/ready');
        expect(ready.status).toBe(200);
        expect(ready.body).toMatchObject({ status: 'ready', kvstore: 'unresponsive' });
      } finally {
        resumeRedis(redis);
      }
      await waitFor('/health ok again', async () => (await request(t.app).get('/health')).body.status === 'ok', {
        timeoutMs: 15_000,
        intervalMs: 50,
      });
      expect((await request(t.app).get('/health')).body.kvstore).toBe('connected');
    } finally {
      await t.close();
    }
  }, 40_000);
});
