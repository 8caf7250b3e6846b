/** Request types of `svc_ai_search_requests_by_type_*{type}`. */
export type RequestType = 'search' | 'chat' | 'ingest' | 'upload' | 'export' | 'eval' | 'content' | 'other';
/** Every request type, in exposition order. */
export const REQUEST_TYPES: readonly RequestType[] = ['search', 'chat', 'ingest', 'upload', 'export', 'eval', 'content', 'other'];

/** Operational endpoints (spec §4.1): not counted as traffic, never rate limited. */
export const OPERATIONAL_PATHS: readonly string[] = [
  '/api/metrics/prometheus',
  '/api/health',
  '/health',
  '/health/ready',
  '/health/live',
  '/metrics',
  '/api/rate-limit',
];

const OPERATIONAL = new Set(OPERATIONAL_PATHS);

/** True for the operational endpoints of spec §4.1 (a trailing slash is ignored). */
export function isOperationalPath(path: string): boolean {
  return OPERATIONAL.has(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
}

/** True when `path` is `prefix` or lies below it on a segment boundary. */
export function underPrefix(path: string, prefix: string): boolean {
  return path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 47 /* / */);
}

const RULES: ReadonlyArray<readonly [string, RequestType]> = [
  ['/api/search', 'search'],
  ['/api/chat', 'chat'],
  ['/api/v1/chat', 'chat'],
  ['/api/ingest-batch', 'ingest'],
  ['/api/ingest', 'ingest'],
  ['/api/upload', 'upload'],
  ['/api/export', 'export'],
  ['/api/eval', 'eval'],
  ['/api/v1/articles', 'content'],
  ['/api/v1/projects', 'content'],
  ['/api/v1/experiences', 'content'],
];

/** The request type of a path, for the by-type metrics. */
export function requestTypeOf(path: string): RequestType {
  for (const [prefix, type] of RULES) if (underPrefix(path, prefix)) return type;
  return 'other';
}
