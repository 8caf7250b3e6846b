import { API_PREFIX, HTTP_ROUTES, type HttpRoute, type RequestType } from '../../contract';

const ROUTES: readonly HttpRoute[] = Object.values(HTTP_ROUTES);

/** Operational endpoints (spec §4.1): not counted as traffic, never rate limited. */
export const OPERATIONAL_PATHS: readonly string[] = ROUTES.filter((r) => r.operational).map((r) => r.path);

const OPERATIONAL = new Set(OPERATIONAL_PATHS);

/**
 * True for the operational endpoints of spec §4.1, with Express's routing rules: case-insensitive,
 * one trailing slash ignored (`/HEALTH/` is `/health`, as the ops router answers it).
 */
export function isOperationalPath(path: string): boolean {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return OPERATIONAL.has(p) || OPERATIONAL.has(p.toLowerCase());
}

/** Char code of `/`. */
const SLASH = 0x2f;

/** True when `path` is `prefix` or lies below it on a segment boundary. */
export function underPrefix(path: string, prefix: string): boolean {
  return path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === SLASH);
}

/** One route of the functional API, as the routers in service/routes/ mount it. */
export interface ApiRoute {
  /** `GET` routes answer `HEAD` too, as Express does. */
  readonly method: 'GET' | 'POST';
  /** Express path syntax: literal segments, `:name` (one segment), a final `*name` (the rest, one or more characters). */
  readonly path: string;
  readonly type: RequestType;
}

/**
 * The functional API's routes (the route table's rows with a request type): the one
 * classification of a request that both the rate limiter (which tier plan it gets; a request
 * matching none is charged to the ip tier only) and the by-type request metrics use. A test
 * checks it against the routers Express really runs.
 */
export const API_ROUTES: readonly ApiRoute[] = ROUTES.flatMap((r) =>
  r.type ? [{ method: r.method, path: r.path, type: r.type }] : [],
);

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
  const n = API_PREFIX.length;
  if (path.length < n || path.charCodeAt(0) !== SLASH || path.slice(0, n).toLowerCase() !== API_PREFIX)
    return undefined;
  const end = path.indexOf('/', n);
  return (end < 0 ? path.slice(n) : path.slice(n, end)).toLowerCase();
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
      if (bucket === undefined) throw new Error(`route ${route.method} ${route.path} is not under ${API_PREFIX}`);
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
