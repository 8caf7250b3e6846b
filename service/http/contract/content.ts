import { z } from 'zod';
import type { ContentCollection } from '../../../contract';
import type { ItemType } from '../../content/item';
import { listedItemSchema } from './item';
import { dayParam, intParam, listParam } from './params';

/** The item type each content collection of the route table holds. */
export const COLLECTION_ITEM_TYPES: Readonly<Record<ContentCollection, ItemType>> = {
  articles: 'article',
  projects: 'project',
  experiences: 'experience',
};

/** The orders of a listing: newest first (the default, the spec's), oldest first, last updated first. */
export const LIST_SORTS = ['date:desc', 'date:asc', 'updated:desc'] as const;

/** `GET /api/v1/{collection}?limit=&offset=&tag=&date_from=&date_to=&sort=`. */
export const listQuery = z.object({
  limit: intParam(1, 100, 20, 'limit must be an integer from 1 to 100').meta({ description: 'Items per page.' }),
  offset: intParam(0, 1_000_000, 0, 'offset must be an integer from 0 to 1000000').meta({
    description: 'Items to skip.',
  }),
  tag: listParam(z.string().max(64), {
    max: 20,
    message: 'tag must be at most 20 tags of at most 64 characters',
  }).meta({ description: 'Only items with any of these tags (case-insensitive), repeated; empty means no filter.' }),
  date_from: dayParam('date_from', 'Only items dated this day or later (their `date`, else the day of `created_at`).'),
  date_to: dayParam('date_to', 'Only items dated this day or earlier (their `date`, else the day of `created_at`).'),
  sort: z
    .preprocess(
      (v) => (v === '' ? undefined : v),
      z.enum(LIST_SORTS, { error: `sort must be one of ${LIST_SORTS.join(', ')}` }).optional(),
    )
    .meta({
      description:
        'date:desc (the default: newest first by date, else created_at, then updated_at, then id), date:asc (oldest first by day, ties by id), updated:desc (ties by id).',
    }),
});

/** The path parameter of `GET /api/v1/{collection}/{id}`. */
export const itemIdParams = z.object({ id: z.string().min(1).meta({ description: 'The item id (slug).' }) });

/** A page of a collection, newest first, without bodies. */
export const listResponseSchema = z
  .object({ items: z.array(listedItemSchema), total: z.int().min(0), limit: z.int(), offset: z.int() })
  .meta({ id: 'ItemList' });
