import type { Router } from 'express';
import {
  API_ROUTES,
  API_ROUTE_TABLE,
  isOperationalPath,
  requestTypeOf,
  RouteTable,
  underPrefix,
} from '../../../service/metrics/request-types';
import { buildTestApp, type TestApp } from '../../helpers/app';

describe('request types', () => {
  it.each([
    ['GET', '/api/search', 'search'],
    ['POST', '/api/search', 'search'],
    ['HEAD', '/api/search', 'search'],
    ['GET', '/api/search/x', 'other'],
    ['GET', '/api/searchx', 'other'],
    ['DELETE', '/api/search', 'other'],
    ['POST', '/api/chat', 'chat'],
    ['POST', '/api/v1/chat', 'chat'],
    ['GET', '/api/chat', 'other'],
    ['POST', '/api/ingest', 'ingest'],
    ['POST', '/api/ingest-batch', 'ingest'],
    ['POST', '/api/upload', 'upload'],
    ['GET', '/api/export/all.json', 'export'],
    ['GET', '/api/export/a/b', 'export'],
    ['GET', '/api/export', 'export'],
    ['GET', '/api/eval', 'eval'],
    ['POST', '/api/eval', 'eval'],
    ['GET', '/api/v1/articles', 'content'],
    ['GET', '/api/v1/projects/p1', 'content'],
    ['GET', '/api/v1/experiences', 'content'],
    ['GET', '/api/v1/projects/p1/x', 'other'],
    ['GET', '/', 'other'],
    ['GET', '/api/v2/articles', 'other'],
    ['GET', '/wp-admin/x.php', 'other'],
    ['OPTIONS', '/api/search', 'other'],
  ])('%s %s → %s', (method, path, type) => {
    expect(requestTypeOf(method, path)).toBe(type);
  });

  it('follows Express routing: case-insensitive, one trailing slash ignored', () => {
    expect(requestTypeOf('GET', '/API/SEARCH')).toBe('search');
    expect(requestTypeOf('GET', '/api/search/')).toBe('search');
    expect(requestTypeOf('GET', '/Api/Search/')).toBe('search');
    expect(requestTypeOf('get', '/api/search')).toBe('search');
    expect(requestTypeOf('GET', '/api/search//')).toBe('other');
    expect(requestTypeOf('POST', '/API/V1/CHAT/')).toBe('chat');
    expect(requestTypeOf('GET', '/API/V1/ARTICLES/A1/')).toBe('content');
  });

  it('matches prefixes on segment boundaries', () => {
    expect(underPrefix('/api/search', '/api/search')).toBe(true);
    expect(underPrefix('/api/search/', '/api/search')).toBe(true);
    expect(underPrefix('/api/searching', '/api/search')).toBe(false);
  });

  it('knows the operational endpoints of spec §4.1, with the routing case rules', () => {
    for (const p of [
      '/api/metrics/prometheus',
      '/api/health',
      '/health',
      '/health/ready',
      '/health/live',
      '/metrics',
      '/api/rate-limit',
      '/health/',
      '/HEALTH',
      '/Api/Rate-Limit/',
    ]) {
      expect(isOperationalPath(p)).toBe(true);
    }
    expect(isOperationalPath('/api/search')).toBe(false);
    expect(isOperationalPath('/healthz')).toBe(false);
    expect(isOperationalPath('/health//')).toBe(false);
  });

  it('refuses a route outside /api/ (the table buckets by the segment after it)', () => {
    expect(() => new RouteTable([{ method: 'GET', path: '/other', type: 'other' }])).toThrow('not under /api/');
  });
});

/** A route layer of an Express 5 router, as far as this test reads it. */
interface RouteLayer {
  readonly route?: {
    readonly path: string | string[];
    readonly methods: Record<string, boolean>;
    _handlesMethod(m: string): boolean;
  };
  readonly handle: { readonly stack?: RouteLayer[] };
  match(path: string): boolean;
}

/** Every route layer of `router`, nested routers included. */
function routeLayers(router: Router): RouteLayer[] {
  const out: RouteLayer[] = [];
  const walk = (stack: readonly RouteLayer[]) => {
    for (const layer of stack) {
      if (layer.route) out.push(layer);
      else if (layer.handle.stack) walk(layer.handle.stack);
    }
  };
  walk((router as unknown as { stack: RouteLayer[] }).stack);
  return out;
}

describe('API_ROUTES against the routers Express runs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({});
  });
  afterAll(() => t.close());

  it('lists exactly the routes the functional API declares', () => {
    const declared = routeLayers(t.deps.features.router).flatMap((l) => {
      const paths = Array.isArray(l.route!.path) ? l.route!.path : [l.route!.path];
      const methods = Object.keys(l.route!.methods).filter((m) => l.route!.methods[m]);
      return paths.flatMap((p) => methods.map((m) => `${m.toUpperCase()} ${p}`));
    });
    expect(declared.sort()).toEqual(API_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  it('matches a request exactly when Express routes it (paths × methods)', () => {
    const layers = routeLayers(t.deps.features.router);
    const paths = [
      '/api/search',
      '/API/SEARCH',
      '/api/search/',
      '/api/search//',
      '/api/search/x',
      '/api/searchx',
      '/api/Search/',
      '/api/chat',
      '/API/V1/CHAT/',
      '/api/v1/chat/x',
      '/api/ingest',
      '/api/ingest-batch/',
      '/api/INGEST-BATCH',
      '/api/upload',
      '/api/upload/x',
      '/api/export',
      '/api/export/',
      '/api/export//',
      '/api/export/all.json',
      '/api/export/a/b/',
      '/API/EXPORT/A%2Fb',
      '/api/eval',
      '/api/eval/',
      '/api/v1/articles',
      '/api/v1/articles/',
      '/api/v1/articles/a1',
      '/api/v1/articles/a1/',
      '/api/v1/articles//',
      '/api/v1/articles/a/b',
      '/API/V1/PROJECTS/P',
      '/api/v1/experiences',
      '/api/v1/experience',
      '/api',
      '/api/',
      '/',
      '/wp-admin/x.php',
      '/api/v2/articles',
    ];
    const mismatches: string[] = [];
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS']) {
      for (const path of paths) {
        // OPTIONS is answered by Express's automatic responder, never by a route of the table.
        const express = method !== 'OPTIONS' && layers.some((l) => l.match(path) && l.route!._handlesMethod(method));
        const table = API_ROUTE_TABLE.match(method, path) !== undefined;
        if (express !== table) mismatches.push(`${method} ${path}: express ${express}, table ${table}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});
