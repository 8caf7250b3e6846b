import { z } from 'zod';
import { itemIssueSchema } from './errors';
import { ITEM_EXAMPLE, itemInput } from './item';

/** Most items in one `POST /api/ingest-batch`. */
export const MAX_BATCH_ITEMS = 1000;

/**
 * `POST /api/ingest-batch` `{items: [...]}`. Only the envelope is checked here; each item is
 * validated on its own (`itemInput`) so one bad item is reported in the per-item results and
 * does not refuse the others.
 */
export const batchRequest = z
  .object({
    items: z
      .array(z.unknown(), { error: 'items is required: an array of items' })
      .min(1, { error: 'items is empty: send at least one item' })
      .meta({ description: `Up to ${MAX_BATCH_ITEMS} items (more is a 413).` }),
  })
  .meta({ id: 'BatchRequest' });

/** JSON Schema of the batch body as documented: an array of `ItemInput`. */
export const batchRequestDoc = z
  .object({ items: z.array(itemInput).min(1).max(MAX_BATCH_ITEMS) })
  .meta({ id: 'BatchRequestDoc', example: { items: [ITEM_EXAMPLE] } });

const change = z.enum(['created', 'updated', 'unchanged']);

/** Outcome of one item of a batch. */
export const batchResultSchema = z
  .discriminatedUnion('status', [
    z.object({ index: z.int(), status: z.literal('stored'), id: z.string(), updated_at: z.iso.datetime(), change }),
    z.object({
      index: z.int(),
      status: z.literal('invalid'),
      field: z.string(),
      message: z.string(),
      issues: z.array(itemIssueSchema),
      collides_with: z.array(z.looseObject({ index: z.int(), title: z.string() })).optional(),
      collides_with_count: z.int().optional(),
    }),
  ])
  .meta({ id: 'BatchResult' });

/** 201 (all stored) and 207 (some stored). */
export const batchResponseSchema = z
  .object({ stored: z.int().min(1), failed: z.int().min(0), results: z.array(batchResultSchema) })
  .meta({ id: 'BatchResponse' });

/** 422: none stored; an error with the per-item results. */
export const batchRefusedSchema = z
  .object({
    error: z.literal('invalid_items'),
    message: z.string(),
    stored: z.literal(0),
    failed: z.int(),
    results: z.array(batchResultSchema),
  })
  .meta({ id: 'BatchRefused' });
