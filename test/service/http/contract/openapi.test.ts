import type { Router } from 'express';
import request from 'supertest';
import { openApiDocument } from '../../../../service/http/contract/openapi';
import { OPERATIONAL_PATHS } from '../../../../service/metrics/request-types';
import { opsRouter } from '../../../../service/routes/ops';
import { searchPageRouter } from '../../../../service/web/search-page';
import { buildTestApp, type TestApp } from '../../../helpers/app';

/** A route layer of an Express 5 router, as far as this test reads it. */
interface RouteLayer {
  readonly route?: { readonly path: string | string[]; readonly methods: Record<string, boolean> };
  readonly handle: { readonly stack?: RouteLayer[] };
}

/** `METHOD /path` of every route of `router` (nested routers included), in OpenAPI path syntax. */
function routesOf(router: Router): string[] {
  const out: string[] = [];
  const walk = (stack: readonly RouteLayer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const p of paths) {
          for (const m of Object.keys(layer.route.methods).filter((k) => layer.route!.methods[k])) {
            // `/api/export/*rest` (several segments) is the documented 400 of `/api/export/{name}`:
            // OpenAPI has no multi-segment parameter, and both answer the same way to a path.
            const path = p.replace(/\/\*[A-Za-z_$][\w$]*$/, '/{name}').replace(/:([A-Za-z_$][\w$]*)/g, '{$1}');
            out.push(`${m.toUpperCase()} ${path}`);
          }
        }
      } else if (layer.handle.stack) walk(layer.handle.stack);
    }
  };
  walk((router as unknown as { stack: RouteLayer[] }).stack);
  return [...new Set(out)].sort();
}

function documented(doc: ReturnType<typeof openApiDocument>): string[] {
  const paths = doc.paths as Record<string, Record<string, unknown>>;
  return Object.entries(paths)
    .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
    .sort();
}

describe('the OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ rateLimit: { enabled: true } });
  });
  afterAll(() => t.close());

  it('documents exactly the routes Express runs: the functional API and the operational endpoints', () => {
    const express = [...routesOf(t.deps.features.router), ...routesOf(opsRouter(t.deps))].sort();
    expect(documented(openApiDocument())).toEqual(express);
  });

  it('leaves out only the search page: every other route the app itself runs is documented', () => {
    // The whole app (the ops router runs inside a function layer, so it is walked on its own above).
    const app = (t.app as unknown as { router: Router }).router;
    const undocumented = routesOf(app).filter((r) => !documented(openApiDocument()).includes(r));
    expect(undocumented).toEqual(routesOf(searchPageRouter()));
    expect(undocumented).toContain('GET /');
  });

  it('marks exactly the operational endpoints as not rate limited (no 429, tag operations)', () => {
    const paths = openApiDocument().paths as Record<
      string,
      Record<string, { tags: string[]; responses: Record<string, unknown> }>
    >;
    for (const [path, ops] of Object.entries(paths)) {
      for (const op of Object.values(ops)) {
        const operational = OPERATIONAL_PATHS.includes(path);
        expect({ path, operational: op.tags.includes('operations') }).toEqual({ path, operational });
        expect({ path, limited: '429' in op.responses }).toEqual({ path, limited: !operational });
      }
    }
  });

  it('is served at GET /api/openapi.json as generated, not rate limited and not counted as traffic', async () => {
    const before = (await request(t.app).get('/metrics')).body.requests.total;
    const res = await request(t.app).get('/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    expect(res.body).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    expect(res.body.openapi).toBe('3.1.0');
    expect((await request(t.app).get('/metrics')).body.requests.total).toBe(before);
  });

  it('names the bearer scheme on the writes only', () => {
    const doc = openApiDocument();
    const paths = doc.paths as Record<string, Record<string, { security?: unknown[] }>>;
    const secured = Object.entries(paths).flatMap(([p, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.security?.length)
        .map(([m]) => `${m.toUpperCase()} ${p}`),
    );
    expect(secured.sort()).toEqual(['POST /api/ingest', 'POST /api/ingest-batch', 'POST /api/upload']);
    expect((doc.components as { securitySchemes: unknown }).securitySchemes).toEqual({
      bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
  });
});
