import express from 'express';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { ManualClock } from '../../helpers/manual-clock';
import { metricsMiddleware } from '../../../service/metrics/middleware';
import { RequestStats } from '../../../service/metrics/request-stats';
import { RouteTable } from '../../../service/metrics/request-types';
import { ServiceMetrics } from '../../../service/metrics/service-metrics';
import { waitFor } from '../../../tools/harness/ports';

/** The routes of `serve()`'s app (GET /api/chat is not a route of the real API, hence its own table). */
const ROUTES = new RouteTable([
  { method: 'GET', path: '/api/search', type: 'search' },
  { method: 'GET', path: '/api/chat', type: 'chat' },
  { method: 'GET', path: '/api/eval', type: 'eval' },
]);

/** An app behind the metrics middleware on a real loopback server: fast, failing and hanging routes. */
async function serve(routes: RouteTable = ROUTES) {
  const stats = new RequestStats(new ManualClock());
  const registry = new Registry();
  const metrics = new ServiceMetrics(registry, { stats }, { processMetrics: false });
  const app = express();
  // Paths whose response has closed, each added once every listener of that last event of the
  // response (the middleware records on it) has run: after it nothing more can be recorded.
  const closed: string[] = [];
  app.use((req, res, next) => {
    res.on('close', () => setImmediate(() => closed.push(req.path)));
    next();
  });
  app.use(metricsMiddleware(stats, metrics, routes));
  app.get('/api/search', (_req, res) => void res.json({ ok: true }));
  app.get('/api/chat', (_req, res) => void res.status(503).json({ error: 'unavailable' }));
  app.get('/health', (_req, res) => void res.json({ status: 'ok' }));
  // Never answers: the client gives up first, once the request is in (`entered`).
  let entered: () => void = () => undefined;
  const inside = () => new Promise<void>((r) => (entered = r));
  app.get('/api/eval', () => entered());
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => {
    // Stops the event-loop monitor it started: an open one kept this file's module graph alive in its jest worker.
    metrics.close();
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { stats, registry, base, close, inside, closed };
}

/** GET that resolves with the status, or with 0 when `abortWhen` settles first (the client hangs up). */
function get(url: string, abortWhen?: Promise<unknown>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve(0) : reject(err)));
    void abortWhen?.then(() => req.destroy());
    req.end();
  });
}

/** Waits until `check` holds (the middleware records on the response's `close`, just after the client has its answer). */
async function until(check: () => boolean): Promise<void> {
  await waitFor(String(check), check, { timeoutMs: 10_000, intervalMs: 5 });
}

describe('metrics middleware', () => {
  it('records each finished request once, with its status, type and duration; operational endpoints not at all', async () => {
    const t = await serve();
    try {
      expect(await get(`${t.base}/api/search?q=x`)).toBe(200);
      expect(await get(`${t.base}/api/chat`)).toBe(503);
      expect(await get(`${t.base}/health`)).toBe(200);
      await until(() => t.stats.snapshot().total === 2);
      const s = t.stats.snapshot();
      expect(s).toMatchObject({ total: 2, successful: 1, failed: 1 });
      expect(s.byType.search.count).toBe(1);
      expect(s.byType.chat.count).toBe(1);
      const text = await t.registry.metrics();
      expect(text).toContain(
        'svc_ai_search_http_request_duration_seconds_count{route="search",method="GET",status_class="2xx"} 1',
      );
      expect(text).toContain(
        'svc_ai_search_http_request_duration_seconds_count{route="chat",method="GET",status_class="5xx"} 1',
      );
    } finally {
      await t.close();
    }
  });

  it('a client that hangs up before the answer counts once, as failed with status 499', async () => {
    const t = await serve();
    try {
      expect(await get(`${t.base}/api/eval`, t.inside())).toBe(0);
      await until(() => t.stats.snapshot().total === 1);
      // Nothing else arrives later (no second record from another event): once the response's
      // last event has run its course, not after 50 ms.
      await until(() => t.closed.includes('/api/eval'));
      expect(t.stats.snapshot()).toMatchObject({ total: 1, successful: 0, failed: 1 });
      expect(t.stats.snapshot().byType.eval.count).toBe(1);
      expect(await t.registry.metrics()).toContain(
        'svc_ai_search_http_request_duration_seconds_count{route="eval",method="GET",status_class="4xx"} 1',
      );
    } finally {
      await t.close();
    }
  });

  it('counts /API/SEARCH and /api/search/ as search, as Express routes them; a path no route takes as other', async () => {
    // The default table: the functional API's own routes.
    const t = await serve(undefined);
    try {
      expect(await get(`${t.base}/API/SEARCH?q=x`)).toBe(200);
      expect(await get(`${t.base}/api/search/`)).toBe(200);
      expect(await get(`${t.base}/Api/Search/?q=y`)).toBe(200);
      expect(await get(`${t.base}/api/search/x`)).toBe(404);
      // Operational whatever its case, as the router answers it: not counted.
      expect(await get(`${t.base}/HEALTH`)).toBe(200);
      await until(() => t.stats.snapshot().total === 4);
      const s = t.stats.snapshot();
      expect(s.byType.search.count).toBe(3);
      expect(s.byType.other.count).toBe(1);
      expect(await t.registry.metrics()).toContain(
        'svc_ai_search_http_request_duration_seconds_count{route="search",method="GET",status_class="2xx"} 3',
      );
    } finally {
      await t.close();
    }
  });
});
