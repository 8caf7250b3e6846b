import { z } from 'zod';
import type { ContentCollection } from '../../../contract';
import type { ItemType } from '../../content/item';
import { listedItemSchema } from './item';
import { intParam, onceParam } from './params';

/** The item type each content collection of the route table holds. */
export const COLLECTION_ITEM_TYPES: Readonly<Record<ContentCollection, ItemType>> = {
  articles: 'article',
  projects: 'project',
  experiences: 'experience',
};

/** `GET /api/v1/{collection}?limit=&offset=&tag=`. */
export const listQuery = z.object({
  limit: intParam(1, 100, 20, 'limit must be an integer from 1 to 100').meta({ description: 'Items per page.' }),
  offset: intParam(0, 1_000_000, 0, 'offset must be an integer from 0 to 1000000').meta({
    description: 'Items to skip.',
  }),
  tag: onceParam('tag')
    .trim()
    .optional()
    .meta({ description: 'Only items with this tag (case-insensitive); empty means no filter.' }),
});

/** The path parameter of `GET /api/v1/{collection}/{id}`. */
export const itemIdParams = z.object({ id: z.string().min(1).meta({ description: 'The item id (slug).' }) });

/** A page of a collection, newest first, without bodies. */
export const listResponseSchema = z
  .object({ items: z.array(listedItemSchema), total: z.int().min(0), limit: z.int(), offset: z.int() })
  .meta({ id: 'ItemList' });
