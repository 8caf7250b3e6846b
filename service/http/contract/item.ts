import { z } from 'zod';
import { ITEM_TYPES, itemInputSchema, type ItemType } from '../../content/item';

/** The three item types. */
export const itemTypeSchema = z
  .enum(ITEM_TYPES as [ItemType, ...ItemType[]], { error: `type must be one of ${ITEM_TYPES.join(', ')}` })
  .meta({ id: 'ItemType' });

/** An example item, from the demo content's README. */
export const ITEM_EXAMPLE = {
  type: 'article',
  title: 'Running the service',
  body: '# Running the service\n\n`make run` installs, builds and serves on :8080.',
  tags: ['operations'],
} as const;

/**
 * An item as a client sends it (ingest, the items of a batch or an upload file): the schema the
 * store validates with, its `url` and `date` described with an example in the document (their
 * checks are code, which JSON Schema cannot carry; the 422 names them). `example`, not
 * `examples`: zod drops `examples` from the input side of a transforming schema.
 */
export const itemInput = itemInputSchema
  .extend({
    url: itemInputSchema.shape.url.meta({
      description: 'Absolute http(s) URL or a site path starting with /.',
      example: '/docs/rate-limiting.md#tiers',
    }),
    date: itemInputSchema.shape.date.meta({
      description: 'Publication date: a calendar date YYYY-MM-DD or an ISO 8601 date-time.',
      example: '2026-11-24',
    }),
  })
  .meta({ id: 'ItemInput', example: ITEM_EXAMPLE });

const itemFields = {
  id: z.string().meta({ description: 'Slug: lower-case letters, digits and single hyphens.' }),
  type: itemTypeSchema,
  title: z.string(),
  summary: z.string().optional(),
  tags: z.array(z.string()),
  url: z.string().optional().meta({ description: 'Absolute http(s) URL or a site path starting with /.' }),
  date: z.string().optional().meta({ description: 'Publication date, YYYY-MM-DD or an ISO 8601 date-time.' }),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  vector: z
    .array(z.number())
    .optional()
    .meta({ description: "The client's own vector of the item (EMBEDDINGS_DIMENSIONS numbers), when it gave one." }),
};

/** One item as stored and served. */
export const itemSchema = z.object({ ...itemFields, body: z.string() }).meta({
  id: 'Item',
  example: {
    id: 'running-the-service',
    type: 'article',
    title: 'Running the service',
    body: '# Running the service\n\n`make run` installs, builds and serves on :8080.',
    tags: ['operations'],
    created_at: '2026-11-24T12:00:00.000Z',
    updated_at: '2026-11-24T12:00:00.000Z',
  },
});

/** An item in a listing: everything but the body. */
export const listedItemSchema = z.object(itemFields).omit({ vector: true }).meta({ id: 'ListedItem' });
