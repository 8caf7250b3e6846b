import { PATHS } from '../../contract';

/** Request types of `svc_ai_search_requests_by_type_*{type}`. */
export type RequestType = 'search' | 'chat' | 'ingest' | 'upload' | 'export' | 'eval' | 'content' | 'other';
/** Every request type, in exposition order. */
export const REQUEST_TYPES: readonly RequestType[] = ['search', 'chat', 'ingest', 'upload', 'export', 'eval', 'content', 'other'];

/** Operational endpoints (spec §4.1): not counted as traffic, never rate limited. */
export const OPERATIONAL_PATHS: readonly string[] = [
  PATHS.metrics,
  PATHS.apiHealth,
  PATHS.health,
  PATHS.ready,
  PATHS.live,
  '/metrics',
  '/api/rate-limit',
  '/api/openapi.json',
];

const OPERATIONAL = new Set(OPERATIONAL_PATHS);

/**
 * True for the operational endpoints of spec §4.1, with Express's routing rules: case-insensitive,
 * one trailing slash ignored (`/HEALTH/` is `/health`, as the ops router answers it).
 */
export function isOperationalPath(path: string): boolean {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return OPERATIONAL.has(p) || OPERATIONAL.has(p.toLowerCase());
}

/** True when `path` is `prefix` or lies below it on a segment boundary. */
export function underPrefix(path: string, prefix: string): boolean {
  return path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 47 /* / */);
}

/** One route of the functional API, as the routers in service/routes/ declare it. */
export interface ApiRoute {
  /** `GET` routes answer `HEAD` too, as Express does. */
  readonly method: 'GET' | 'POST';
  /** Express path syntax: literal segments, `:name` (one segment), a final `*name` (the rest, one or more characters). */
  readonly path: string;
  readonly type: RequestType;
}

/**
 * The functional API's routes: the one classification of a request that both the rate limiter
 * (which tier plan it gets; a request matching none is charged to the ip tier only) and the
 * by-type request metrics use. A test checks it against the routers Express really runs.
 */
export const API_ROUTES: readonly ApiRoute[] = [
  { method: 'GET', path: '/api/search', type: 'search' },
  { method: 'POST', path: '/api/search', type: 'search' },
  { method: 'POST', path: '/api/chat', type: 'chat' },
  { method: 'POST', path: '/api/v1/chat', type: 'chat' },
  { method: 'POST', path: '/api/ingest', type: 'ingest' },
  { method: 'POST', path: '/api/ingest-batch', type: 'ingest' },
  { method: 'POST', path: '/api/upload', type: 'upload' },
  { method: 'GET', path: '/api/export', type: 'export' },
  { method: 'GET', path: '/api/export/:name', type: 'export' },
  { method: 'GET', path: '/api/export/*rest', type: 'export' },
  { method: 'GET', path: '/api/eval', type: 'eval' },
  { method: 'POST', path: '/api/eval', type: 'eval' },
  { method: 'GET', path: '/api/v1/articles', type: 'content' },
  { method: 'GET', path: '/api/v1/articles/:id', type: 'content' },
  { method: 'GET', path: '/api/v1/projects', type: 'content' },
  { method: 'GET', path: '/api/v1/projects/:id', type: 'content' },
  { method: 'GET', path: '/api/v1/experiences', type: 'content' },
  { method: 'GET', path: '/api/v1/experiences/:id', type: 'content' },
];

interface CompiledRoute {
  readonly route: ApiRoute;
  readonly regexp: RegExp;
}

/**
 * The regular expression Express 5 (path-to-regexp 8, `strict` and `caseSensitive` off) matches a
 * route path with: case-insensitive, one optional trailing slash, `:name` one non-empty segment,
 * `*name` any non-empty rest. Matched against the raw (still percent-encoded) path, as Express does.
 */
function routeRegExp(path: string): RegExp {
  let source = '';
  for (const part of path.split(/(:[A-Za-z_$][\w$]*|\*[A-Za-z_$][\w$]*)/)) {
    if (part.startsWith(':')) source += '([^/]+)';
    else if (part.startsWith('*')) source += '([\\s\\S]+)';
    else source += part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  return new RegExp(`^${source}(?:/)?$`, 'i');
}

/** The first segment after `/api/`, lower-cased: the bucket a path's candidate routes are in. */
function bucketOf(path: string): string | undefined {
  if (path.length < 5 || path.charCodeAt(0) !== 47 /* / */ || path.slice(0, 5).toLowerCase() !== '/api/') return undefined;
  const end = path.indexOf('/', 5);
  return (end < 0 ? path.slice(5) : path.slice(5, end)).toLowerCase();
}

/**
 * Answers "which route of the functional API would Express hand this request to?" with
 * Express's own rules (see `routeRegExp`; `HEAD` is answered by `GET` routes). Requests that no
 * route takes (unknown paths, unrouted methods, `OPTIONS`) match nothing.
 */
export class RouteTable {
  /** Candidate routes per first segment after `/api/`, so a request tests only a few patterns. */
  private readonly buckets = new Map<string, CompiledRoute[]>();

  constructor(readonly routes: readonly ApiRoute[]) {
    for (const route of routes) {
      const bucket = bucketOf(route.path);
      if (bucket === undefined) throw new Error(`route ${route.method} ${route.path} is not under /api/`);
      const list = this.buckets.get(bucket) ?? [];
      list.push({ route, regexp: routeRegExp(route.path) });
      this.buckets.set(bucket, list);
    }
  }

  /** The route `method path` reaches, or undefined when Express would answer it with a 404. */
  match(method: string, path: string): ApiRoute | undefined {
    const bucket = bucketOf(path);
    const candidates = bucket === undefined ? undefined : this.buckets.get(bucket);
    if (!candidates) return undefined;
    const m = method === 'HEAD' ? 'GET' : method.toUpperCase();
    for (const c of candidates) if (c.route.method === m && c.regexp.test(path)) return c.route;
    return undefined;
  }
}

/** The table of `API_ROUTES`, shared by the limiter and the request metrics. */
export const API_ROUTE_TABLE = new RouteTable(API_ROUTES);

/** The request type of a request, for the by-type metrics: its route's type, or `other` when no route takes it. */
export function requestTypeOf(method: string, path: string, routes: RouteTable = API_ROUTE_TABLE): RequestType {
  return routes.match(method, path)?.type ?? 'other';
}
