import { Router, type Request } from 'express';
import { ITEM_TYPES, type ItemType } from '../content/item';
import { badRequest } from '../http/errors';
import { jsonBody } from '../http/json-body';
import { queryString } from '../http/query';
import type { SearchRequest } from '../search/search-service';
import type { FeatureContext } from './context';

/** Longest accepted query, characters. */
export const MAX_QUERY_CHARS = 500;
/** Largest `POST /api/search` body, bytes (capped by `MAX_BODY_SIZE`): a query and a few parameters. */
export const SEARCH_BODY_BYTES = 16 * 1024;

/** Validates search parameters from strings (query string or a JSON body's values). */
export function parseSearch(get: (name: string) => unknown): SearchRequest {
  const q = get('q');
  if (q === undefined || q === null || (typeof q === 'string' && q.trim() === '')) {
    throw badRequest('q is required: the words to search for', { field: 'q' });
  }
  if (typeof q !== 'string') throw badRequest('q must be a string', { field: 'q' });
  if (q.length > MAX_QUERY_CHARS) throw badRequest(`q is longer than ${MAX_QUERY_CHARS} characters`, { field: 'q' });
  const type = get('type');
  if (type !== undefined && type !== '' && !ITEM_TYPES.includes(type as ItemType)) {
    throw badRequest(`type must be one of ${ITEM_TYPES.join(', ')}`, { field: 'type' });
  }
  const tag = get('tag');
  if (tag !== undefined && (typeof tag !== 'string' || tag.length > 64)) throw badRequest('tag must be a string of at most 64 characters', { field: 'tag' });
  const int = (name: string, min: number, max: number, dflt: number): number => {
    const v = get(name);
    if (v === undefined || v === '') return dflt;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) throw badRequest(`${name} must be an integer from ${min} to ${max}`, { field: name });
    return n;
  };
  return {
    q: q.trim(),
    ...(type ? { type: type as ItemType } : {}),
    ...(typeof tag === 'string' && tag.trim() ? { tag: tag.trim() } : {}),
    limit: int('limit', 1, 100, 10),
    offset: int('offset', 0, 10_000, 0),
  };
}

/** Parameters from the query string; repeated parameters are refused. */
function fromQuery(req: Request) {
  return (name: string) => queryString(req, name);
}

/**
 * `GET /api/search?q=&type=&tag=&limit=&offset=` and the same as a JSON body on
 * `POST /api/search`: ranked results with snippets, from the result cache when repeated.
 *
 * Routes are added to `r` (createFeatures passes one router for every group, so a request walks one).
 */
export function searchRouter(ctx: FeatureContext, r: Router = Router()): Router {
  r.get('/api/search', async (req, res) => {
    res.json(await ctx.search.search(parseSearch(fromQuery(req))));
  });
  r.post('/api/search', jsonBody(Math.min(SEARCH_BODY_BYTES, ctx.deps.settings.service.maxBodyBytes)), async (req, res) => {
    const body: unknown = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw badRequest('send a JSON object such as {"q": "words", "limit": 10} with Content-Type: application/json', { field: 'body' });
    }
    res.json(await ctx.search.search(parseSearch((name) => (body as Record<string, unknown>)[name])));
  });
  return r;
}
