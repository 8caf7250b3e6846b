import { z } from 'zod';
import { ITEM_TYPES } from '../../content/item';
import { itemTypeSchema } from './item';
import { intParam } from './params';

/** Longest accepted query, characters. */
export const MAX_QUERY_CHARS = 500;

/**
 * The parameters of `GET /api/search` (query string) and `POST /api/search` (JSON body): one
 * schema for both. `q` is trimmed; an empty `type` or `tag` is no filter.
 */
export const searchParams = z.object({
  q: z
    .string({
      error: (i) =>
        i.input === undefined || i.input === null
          ? 'q is required: the words to search for'
          : Array.isArray(i.input)
            ? 'query parameter q must be given once, as a string'
            : 'q must be a string',
    })
    .max(MAX_QUERY_CHARS, { error: `q is longer than ${MAX_QUERY_CHARS} characters` })
    .trim()
    .min(1, { error: 'q is required: the words to search for' })
    .meta({ description: 'The words to search for.', example: 'rate limit' }),
  type: z
    .preprocess((v) => (v === '' ? undefined : v), itemTypeSchema.optional())
    .meta({ description: `Only items of this type (${ITEM_TYPES.join(', ')}).` }),
  tag: z
    .string({ error: 'tag must be a string of at most 64 characters' })
    .max(64, { error: 'tag must be a string of at most 64 characters' })
    .trim()
    .optional()
    .meta({ description: 'Only items with this tag (case-insensitive).' }),
  limit: intParam(1, 100, 10, 'limit must be an integer from 1 to 100').meta({ description: 'Results per page.' }),
  offset: intParam(0, 10_000, 0, 'offset must be an integer from 0 to 10000').meta({ description: 'Results to skip.' }),
});
export type SearchParams = z.input<typeof searchParams>;

/** One ranked result. */
export const searchResultSchema = z
  .object({
    id: z.string(),
    type: itemTypeSchema,
    title: z.string(),
    snippet: z.string().meta({ description: 'HTML-safe text with the matches in <mark>.' }),
    score: z.number(),
    url: z.string().nullable(),
  })
  .meta({ id: 'SearchResult' });
/** One result as the API returns it: the schema's output (service/search/search-service.ts builds it). */
export type SearchResult = z.output<typeof searchResultSchema>;

/** The body of a search answer. */
export const searchResponseSchema = z
  .object({
    query: z.string(),
    total: z.int().min(0),
    results: z.array(searchResultSchema),
    took_ms: z.number().min(0),
    cached: z.boolean(),
  })
  .meta({
    id: 'SearchResponse',
    example: {
      query: 'rate limit',
      total: 1,
      results: [
        {
          id: 'rate-limiting',
          type: 'article',
          title: 'Rate limiting',
          snippet:
            'Every request is charged to the global, ip and search tiers: the <mark>rate</mark> <mark>limit</mark>…',
          score: 7.2,
          url: null,
        },
      ],
      took_ms: 0.4,
      cached: false,
    },
  });
/** The body of a search answer: the schema's output (service/search/search-service.ts builds it). */
export type SearchResponse = z.output<typeof searchResponseSchema>;
