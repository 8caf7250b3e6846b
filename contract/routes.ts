/**
 * The route table: every HTTP route the service answers, spelled once. The routers mount these
 * paths, the OpenAPI document and the typed client are written from them, the request metrics
 * classify by them (`type`), the rate limiter exempts the operational ones, and the settings'
 * default tier mapping (spec §4.2) is read from `tier`. Data only: what is derived from it lives
 * with its reader. `test/contract/routes.test.ts` checks that no product file outside `contract/`
 * spells an `/api/` path.
 */
import { PATHS } from './service';

/** Where the functional API lives: every route but the operational ones outside it is below this prefix. */
export const API_PREFIX = '/api/';

/** Request types of `svc_ai_search_requests_by_type_*{type}`. */
export type RequestType = 'search' | 'chat' | 'ingest' | 'upload' | 'export' | 'eval' | 'content' | 'other';
/** Every request type, in exposition order. */
export const REQUEST_TYPES: readonly RequestType[] = [
  'search',
  'chat',
  'ingest',
  'upload',
  'export',
  'eval',
  'content',
  'other',
];

/**
 * The tier mappings of the settings (`RATE_LIMIT_{CHAT,SEARCH,UPLOAD,EXPORT}_PATHS`): `export`
 * maps into the upload tier.
 */
export type TierMappingName = 'chat' | 'search' | 'upload' | 'export';

/** One route: a method on a path, with what the request metrics, the limiter and the document need to know of it. */
export interface HttpRoute {
  /** `GET` routes answer `HEAD` too, as Express does. */
  readonly method: 'GET' | 'POST';
  /**
   * Express path syntax: literal segments, `:name` (one segment), a final `*name` (the rest, one
   * or more characters). The OpenAPI document writes `:name` as `{name}`.
   */
  readonly path: string;
  /** Functional API: the request type its requests are counted under. */
  readonly type?: Exclude<RequestType, 'other'>;
  /**
   * Functional API: the tier mapping whose default path prefixes (spec §4.2) hold this path. The
   * default prefix is the path up to its first parameter, in the table's order.
   */
  readonly tier?: TierMappingName;
  /** Operational endpoint (spec §4.1): never rate limited, not counted as traffic. */
  readonly operational?: true;
  /** False for a route the OpenAPI document folds into another (it has no multi-segment parameter). */
  readonly documented?: false;
}

/**
 * Every route, keyed by its OpenAPI operationId: the functional API (rate limited, counted by
 * type) and the operational endpoints of spec §4.1 (neither).
 */
export const HTTP_ROUTES = {
  searchGet: { method: 'GET', path: '/api/search', type: 'search', tier: 'search' },
  searchPost: { method: 'POST', path: '/api/search', type: 'search', tier: 'search' },
  chat: { method: 'POST', path: '/api/chat', type: 'chat', tier: 'chat' },
  chatV1: { method: 'POST', path: '/api/v1/chat', type: 'chat', tier: 'chat' },
  ingest: { method: 'POST', path: '/api/ingest', type: 'ingest', tier: 'upload' },
  ingestBatch: { method: 'POST', path: '/api/ingest-batch', type: 'ingest', tier: 'upload' },
  upload: { method: 'POST', path: '/api/upload', type: 'upload', tier: 'upload' },
  exportIndex: { method: 'GET', path: '/api/export', type: 'export', tier: 'export' },
  export: { method: 'GET', path: '/api/export/:name', type: 'export', tier: 'export' },
  /** Several segments after `/api/export/`: the 400 of `export` (a path, not a name). */
  exportPath: { method: 'GET', path: '/api/export/*rest', type: 'export', tier: 'export', documented: false },
  lastEvaluation: { method: 'GET', path: '/api/eval', type: 'eval', tier: 'search' },
  evaluate: { method: 'POST', path: '/api/eval', type: 'eval', tier: 'search' },
  listArticles: { method: 'GET', path: '/api/v1/articles', type: 'content', tier: 'search' },
  getArticle: { method: 'GET', path: '/api/v1/articles/:id', type: 'content', tier: 'search' },
  listProjects: { method: 'GET', path: '/api/v1/projects', type: 'content', tier: 'search' },
  getProject: { method: 'GET', path: '/api/v1/projects/:id', type: 'content', tier: 'search' },
  listExperiences: { method: 'GET', path: '/api/v1/experiences', type: 'content', tier: 'search' },
  getExperience: { method: 'GET', path: '/api/v1/experiences/:id', type: 'content', tier: 'search' },
  health: { method: 'GET', path: PATHS.health, operational: true },
  apiHealth: { method: 'GET', path: PATHS.apiHealth, operational: true },
  live: { method: 'GET', path: PATHS.live, operational: true },
  ready: { method: 'GET', path: PATHS.ready, operational: true },
  metrics: { method: 'GET', path: '/metrics', operational: true },
  prometheusMetrics: { method: 'GET', path: PATHS.metrics, operational: true },
  rateLimit: { method: 'GET', path: '/api/rate-limit', operational: true },
  openapi: { method: 'GET', path: '/api/openapi.json', operational: true },
} as const satisfies Record<string, HttpRoute>;

/** The key of a route in `HTTP_ROUTES` (its operationId). */
export type RouteId = keyof typeof HTTP_ROUTES;

/** The content collections (spec §4.2's read paths), by the name their paths use: the route listing them and the one reading an item. */
export const CONTENT_COLLECTIONS = {
  articles: { list: 'listArticles', item: 'getArticle' },
  projects: { list: 'listProjects', item: 'getProject' },
  experiences: { list: 'listExperiences', item: 'getExperience' },
} as const satisfies Record<string, { readonly list: RouteId; readonly item: RouteId }>;

/** A content collection's name, as its paths spell it. */
export type ContentCollection = keyof typeof CONTENT_COLLECTIONS;
