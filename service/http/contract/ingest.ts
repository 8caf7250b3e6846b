import { z } from 'zod';
import { itemIssueSchema } from './errors';
import { ITEM_LIMITS } from '../../content/item';
import { ITEM_EXAMPLE, itemInput, itemTypeSchema } from './item';

/** Most items in one `POST /api/ingest-batch`. */
export const MAX_BATCH_ITEMS = 1000;

/** Most ids in one `delete`, and most patches in one `patch` (as items in one batch). */
export const MAX_BATCH_OPERATIONS = MAX_BATCH_ITEMS;

const FILTER_FIELDS = ['type', 'tag', 'date_before'] as const;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const isDay = (v: string) => DAY.test(v) && new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) === v;

/**
 * `delete_where`: which items to delete, every field given must hold (content/item-filter.ts).
 * An unknown field is refused naming it; an empty filter (it would delete everything) too.
 */
export const itemFilterSchema = z
  .strictObject(
    {
      type: itemTypeSchema.optional(),
      tag: z
        .string({ error: 'delete_where.tag must be a string' })
        .trim()
        .min(1, { error: 'delete_where.tag must not be empty' })
        .max(ITEM_LIMITS.tagLength, { error: `delete_where.tag is longer than ${ITEM_LIMITS.tagLength} characters` })
        .optional()
        .meta({ description: 'A tag the item carries (case-insensitive).' }),
      date_before: z
        .string({ error: 'delete_where.date_before must be a string' })
        .refine(isDay, { error: 'delete_where.date_before must be a calendar date YYYY-MM-DD' })
        .optional()
        .meta({
          description: 'Items whose day (`date`, else `created_at`) is before this one (`YYYY-MM-DD`).',
          example: '2026-01-01',
        }),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown filter field: a filter has ${FILTER_FIELDS.join(', ')}`
          : 'delete_where must be an object: {type?, tag?, date_before?}',
    },
  )
  .refine((f) => FILTER_FIELDS.some((k) => f[k] !== undefined), {
    error: `delete_where is empty: give at least one of ${FILTER_FIELDS.join(', ')} (an empty filter would delete everything)`,
  })
  .meta({ id: 'ItemFilter', minProperties: 1 });

const deleteIds = z
  .array(z.string({ error: 'delete holds ids (strings)' }).min(1, { error: 'an id must not be empty' }), {
    error: 'delete must be an array of ids',
  })
  .max(MAX_BATCH_OPERATIONS, {
    error: `delete holds more than ${MAX_BATCH_OPERATIONS} ids; send them in several requests`,
  })
  .meta({ description: `Up to ${MAX_BATCH_OPERATIONS} ids to delete; an id not held is reported in \`not_found\`.` });

/** One patch as the envelope checks it: an id; its fields are validated with the patched item. */
const patchEntry = z.looseObject(
  { id: z.string({ error: 'a patch names its item: id is required (a string)' }) },
  { error: 'a patch is an object {id, ...fields}' },
);
const patches = z.array(patchEntry, { error: 'patch must be an array of {id, ...fields}' }).max(MAX_BATCH_OPERATIONS, {
  error: `patch holds more than ${MAX_BATCH_OPERATIONS} patches; send them in several requests`,
});

/** The operations beside `items` (issue 39); one of the four is required. */
const OPERATION_KEYS = ['items', 'delete', 'delete_where', 'patch'] as const;

/**
 * `POST /api/ingest-batch` `{items?, delete?, delete_where?, patch?}`. Only the envelope is
 * checked here; each item is validated on its own (`itemInput`) so that, in a request of items
 * alone, one bad item is reported in the per-item results and does not refuse the others; a
 * patch is validated with the item it makes.
 */
export const batchRequest = z
  .object({
    items: z
      .array(z.unknown(), { error: 'items must be an array of items' })
      .optional()
      .meta({ description: `Up to ${MAX_BATCH_ITEMS} items (more is a 413).` }),
    delete: deleteIds.optional(),
    delete_where: itemFilterSchema.optional(),
    patch: patches.optional(),
  })
  .refine((b) => OPERATION_KEYS.some((k) => b[k] !== undefined), {
    error: 'items is required: an array of items (or delete, delete_where, patch)',
    path: ['items'],
  })
  .refine(
    (b) =>
      b.items === undefined || b.items.length > 0 || OPERATION_KEYS.some((k) => k !== 'items' && b[k] !== undefined),
    {
      error: 'items is empty: send at least one item',
      path: ['items'],
    },
  )
  .meta({ id: 'BatchRequest' });

/** A patch as documented: the id and any of the item's fields. */
export const itemPatchDoc = itemInput
  .partial()
  .extend({ id: z.string().meta({ description: 'The item to patch (refused when not held).' }) })
  .meta({ id: 'ItemPatch', example: { id: 'running-the-service', tags: ['operations', 'howto'] } });

/** JSON Schema of the batch body as documented. */
export const batchRequestDoc = z
  .object({
    items: z.array(itemInput).min(1).max(MAX_BATCH_ITEMS).optional(),
    delete: z.array(z.string()).max(MAX_BATCH_OPERATIONS).optional(),
    delete_where: itemFilterSchema.optional(),
    patch: z.array(itemPatchDoc).max(MAX_BATCH_OPERATIONS).optional(),
  })
  .meta({
    id: 'BatchRequestDoc',
    description: 'At least one of items, delete, delete_where, patch.',
    minProperties: 1,
    example: { items: [ITEM_EXAMPLE] },
  });

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

/** What the operations beside `items` did (present when the request held any). */
export const operationsOutcomeSchema = z
  .object({
    deleted: z.array(z.string()).meta({ description: 'Ids of `delete` that were held and are deleted.' }),
    not_found: z
      .array(z.string())
      .meta({ description: 'Ids of `delete` not held: nothing to do (deletes are idempotent), not an error.' }),
    patched: z.array(z.object({ id: z.string(), updated_at: z.iso.datetime(), change })),
    delete_where: z
      .object({
        count: z.int().min(0).meta({ description: 'How many items the filter deleted.' }),
        ids: z.array(z.string()).meta({ description: `Their ids (the first ${MAX_BATCH_OPERATIONS}).` }),
        truncated: z.boolean().meta({ description: 'More were deleted than `ids` lists.' }),
      })
      .optional(),
  })
  .meta({ id: 'OperationsOutcome' });

/** 201 (all stored), 207 (some stored), 200 (operations without items). */
export const batchResponseSchema = z
  .object({
    stored: z.int().min(0),
    failed: z.int().min(0),
    results: z.array(batchResultSchema),
    operations: operationsOutcomeSchema.optional(),
  })
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
