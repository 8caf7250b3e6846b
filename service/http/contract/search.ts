import { z } from 'zod';
import { ITEM_TYPES } from '../../content/item';
import { FACET_NAMES } from '../../content/item-filter';
import { itemTypeSchema } from './item';
import { dayParam, intParam, listParam } from './params';

/** Longest accepted query, characters. */
export const MAX_QUERY_CHARS = 500;

/** Every order of a search's results, the default with words first; ties always by id, ascending. */
export const SEARCH_SORTS = ['relevance', 'date:desc', 'date:asc', 'updated:desc'] as const;
/** One of `SEARCH_SORTS`. */
export type SearchSort = (typeof SEARCH_SORTS)[number];

/** The modes of a search (issue 41): by words, by meaning, or both fused. */
export const SEARCH_MODES = ['keyword', 'semantic', 'hybrid'] as const;
/** One of `SEARCH_MODES`. */
export type SearchMode = (typeof SEARCH_MODES)[number];

/** Most numbers in a query `vector` (the route checks it against `EMBEDDINGS_DIMENSIONS`). */
export const MAX_VECTOR_NUMBERS = 8192;

/** Most values of a list parameter (`type`, `tag`). */
export const MAX_FILTER_VALUES = 20;
/** Tags in the tag facet: default and most. */
export const FACET_LIMIT = { default: 20, max: 100 } as const;

const tagValue = z.string().max(64);

/**
 * The parameters of `GET /api/search` (query string) and `POST /api/search` (JSON body): one
 * schema for both. `q` is trimmed; an absent or empty `q` is a search without words (every item
 * the filters keep). Lists repeat in a query string and are arrays in a body; an empty value is
 * no filter.
 */
export const searchParams = z.object({
  q: z
    .string({
      error: (i) =>
        Array.isArray(i.input) ? 'query parameter q must be given once, as a string' : 'q must be a string',
    })
    .max(MAX_QUERY_CHARS, { error: `q is longer than ${MAX_QUERY_CHARS} characters` })
    .trim()
    .default('')
    .meta({
      description: 'The words to search for; absent or empty: every item the filters keep (browsing).',
      example: 'rate limit',
    }),
  type: listParam(itemTypeSchema, {
    max: MAX_FILTER_VALUES,
    comma: true,
    message: `type must be one or more of ${ITEM_TYPES.join(', ')}`,
  }).meta({
    description: `Only items of any of these types (${ITEM_TYPES.join(', ')}): repeated or a comma list, an array in a body.`,
  }),
  tag: listParam(tagValue, {
    max: MAX_FILTER_VALUES,
    message: `tag must be at most ${MAX_FILTER_VALUES} tags of at most 64 characters`,
  }).meta({
    description:
      'Only items with any of these tags (case-insensitive): repeated (a tag may hold a comma), an array in a body.',
  }),
  date_from: dayParam('date_from', 'Only items dated this day or later (their `date`, else the day of `created_at`).'),
  date_to: dayParam('date_to', 'Only items dated this day or earlier (their `date`, else the day of `created_at`).'),
  sort: z
    .preprocess(
      (v) => (v === '' ? undefined : v),
      z.enum(SEARCH_SORTS, { error: `sort must be one of ${SEARCH_SORTS.join(', ')}` }).optional(),
    )
    .meta({
      description:
        'The order: relevance (the default with words), date:desc (the default without), date:asc, updated:desc; ties by id.',
    }),
  facets: listParam(z.enum(FACET_NAMES), {
    max: FACET_NAMES.length,
    comma: true,
    message: `facets must be a comma list of ${FACET_NAMES.join(', ')}`,
  }).meta({
    description: `Facets to count over every match (${FACET_NAMES.join(', ')}): a comma list, an array in a body.`,
  }),
  facet_limit: intParam(
    1,
    FACET_LIMIT.max,
    FACET_LIMIT.default,
    `facet_limit must be an integer from 1 to ${FACET_LIMIT.max}`,
  ).meta({ description: 'Most tags in the tag facet, the most frequent first.' }),
  limit: intParam(1, 100, 10, 'limit must be an integer from 1 to 100').meta({ description: 'Results per page.' }),
  offset: intParam(0, 10_000, 0, 'offset must be an integer from 0 to 10000').meta({ description: 'Results to skip.' }),
  mode: z
    .preprocess(
      (v) => (v === '' ? undefined : v),
      z.enum(SEARCH_MODES, { error: `mode must be one of ${SEARCH_MODES.join(', ')}` }).optional(),
    )
    .meta({
      description:
        'keyword (by words), semantic (by meaning) or hybrid (both, fused); the default is hybrid when items have vectors, else keyword. Without an embedder (or when it fails) the answer is by keyword and says so (docs/api.md, "Search by meaning").',
    }),
  semantic_ratio: z
    .preprocess(
      (v) => (v === '' ? undefined : typeof v === 'string' && /^\s*\d*\.?\d+\s*$/.test(v) ? Number(v) : v),
      z
        .number({ error: 'semantic_ratio must be a number from 0 to 1' })
        .min(0, { error: 'semantic_ratio must be a number from 0 to 1' })
        .max(1, { error: 'semantic_ratio must be a number from 0 to 1' })
        .optional(),
    )
    .meta({
      description:
        'Hybrid search: weight of the semantic ranking, 0 (keyword only) to 1 (semantic only); default SEARCH_SEMANTIC_RATIO (0.1).',
    }),
});
export type SearchParams = z.input<typeof searchParams>;

/** The body of `POST /api/search`: the parameters of `searchParams`, and a query vector. */
export const searchBody = searchParams.extend({
  vector: z
    .array(z.number({ error: 'vector must be an array of finite numbers' }), {
      error: 'vector must be an array of finite numbers (in a POST body)',
    })
    .min(1, { error: 'vector must be an array of finite numbers' })
    .max(MAX_VECTOR_NUMBERS, { error: `vector must hold at most ${MAX_VECTOR_NUMBERS} numbers` })
    .optional()
    .meta({
      description:
        'POST only: a query vector of EMBEDDINGS_DIMENSIONS finite numbers, searched by meaning instead of embedding q (semantic, or hybrid with q).',
    }),
});
/** The body of `POST /api/search` as a client sends it. */
export type SearchBody = z.input<typeof searchBody>;

/** One ranked result. */
export const searchResultSchema = z
  .object({
    id: z.string(),
    type: itemTypeSchema,
    title: z.string(),
    snippet: z.string().meta({ description: 'HTML-safe text with the matches in <mark>.' }),
    score: z.number().meta({ description: 'The relevance score under sort=relevance; 0 under the other sorts.' }),
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
    facets: z
      .object({
        type: z.record(z.string(), z.int().min(0)).optional(),
        tag: z.record(z.string(), z.int().min(0)).optional(),
      })
      .optional()
      .meta({
        description:
          "With `facets`: per facet, its values and the matches holding each, counted with every filter but the facet's own (disjunctive). Every type, 0 included; the `facet_limit` most frequent tags, most first.",
      }),
    mode: z.enum(SEARCH_MODES).meta({ description: 'The mode the answer was found in.' }),
    semantic: z.enum(['off', 'degraded', 'loading']).optional().meta({
      description:
        'Present when the search by meaning asked for (or the default hybrid) was not done: off (no embedder and no vector), degraded (the query could not be embedded), loading (the vector index is still being loaded after a start); the answer is then by keyword.',
    }),
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
      mode: 'keyword',
      took_ms: 0.4,
      cached: false,
    },
  });
/** The body of a search answer: the schema's output (service/search/search-service.ts builds it). */
export type SearchResponse = z.output<typeof searchResponseSchema>;
