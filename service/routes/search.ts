import { Router } from 'express';
import { filterOf } from '../content/item-filter';
import { badRequest } from '../http/errors';
import { searchBody, searchParams } from '../http/contract/search';
import { validate } from '../http/contract/validate';
import { jsonBody } from '../http/json-body';
import type { SearchRequest } from '../search/search-service';
import type { FeatureContext } from './context';
import { HTTP_ROUTES } from '../../contract';

export { MAX_QUERY_CHARS } from '../http/contract/search';
/**
 * Largest `POST /api/search` body, bytes (capped by `MAX_BODY_SIZE`): a query, a few parameters
 * and a query vector (`MAX_VECTOR_NUMBERS` numbers at ~20 characters each in JSON).
 */
export const SEARCH_BODY_BYTES = 256 * 1024;

/** Validates search parameters (a query string or a JSON body) with the route's schema. */
export function parseSearch(input: unknown, dimensions?: number): SearchRequest {
  // A query vector comes in a JSON body only (`POST`), where `dimensions` is given.
  const p =
    dimensions === undefined ? { ...validate(searchParams, input), vector: undefined } : validate(searchBody, input);
  if (p.vector && dimensions !== undefined && p.vector.length !== dimensions) {
    throw badRequest(`vector must hold EMBEDDINGS_DIMENSIONS = ${dimensions} numbers, got ${p.vector.length}`, {
      field: 'vector',
    });
  }
  const filter = filterOf(p);
  return {
    q: p.q,
    ...(Object.keys(filter).length ? { filter } : {}),
    ...(p.sort ? { sort: p.sort } : {}),
    ...(p.facets ? { facets: p.facets, facetLimit: p.facet_limit } : {}),
    limit: p.limit,
    offset: p.offset,
    ...(p.mode ? { mode: p.mode } : {}),
    ...(p.semantic_ratio !== undefined ? { semanticRatio: p.semantic_ratio } : {}),
    ...(p.vector ? { vector: p.vector } : {}),
  };
}

/** Most query strings whose parsed parameters are kept, and the longest kept (characters). */
export const PARSED_QUERIES_MAX = 1000;
export const PARSED_QUERY_MAX_CHARS = 512;

/**
 * The parsed parameters of recent `GET /api/search` query strings: the schema is a pure function
 * of the query string, and a repeated search (answered from the result cache) would otherwise
 * spend a large share of its CPU validating the same parameters again (BENCHMARKS.md, issue 25).
 * Only successes are kept, frozen; bounded by count and key length, emptied when full.
 */
export function parsedQueries(): (url: string, parse: () => SearchRequest) => SearchRequest {
  const kept = new Map<string, SearchRequest>();
  return (url, parse) => {
    if (url.length > PARSED_QUERY_MAX_CHARS) return parse();
    const hit = kept.get(url);
    if (hit) return hit;
    const p = Object.freeze(parse());
    if (kept.size >= PARSED_QUERIES_MAX) kept.clear();
    kept.set(url, p);
    return p;
  };
}

/**
 * `GET /api/search?q=&type=&tag=&date_from=&date_to=&sort=&facets=&facet_limit=&limit=&offset=&mode=&semantic_ratio=` and the same as a JSON body on
 * `POST /api/search` (which may carry a query `vector` too): ranked results with snippets, from the result cache when repeated.
 *
 * Routes are added to `r` (createFeatures passes one router for every group, so a request walks one).
 */
export function searchRouter(ctx: FeatureContext, r: Router = Router()): Router {
  const parsed = parsedQueries();
  r.get(HTTP_ROUTES.searchGet.path, async (req, res) => {
    res.json(await ctx.search.search(parsed(req.url, () => parseSearch(req.query))));
  });
  r.post(
    HTTP_ROUTES.searchPost.path,
    jsonBody(Math.min(SEARCH_BODY_BYTES, ctx.deps.settings.service.maxBodyBytes)),
    async (req, res) => {
      const body: unknown = req.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw badRequest('send a JSON object such as {"q": "words", "limit": 10} with Content-Type: application/json', {
          field: 'body',
        });
      }
      res.json(await ctx.search.search(parseSearch(body, ctx.deps.settings.embeddings.dimensions)));
    },
  );
  return r;
}
