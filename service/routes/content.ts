import { Router } from 'express';
import type { Item } from '../content/item';
import { HttpError } from '../http/errors';
import { COLLECTION_ITEM_TYPES, itemIdParams, listQuery } from '../http/contract/content';
import { validate } from '../http/contract/validate';
import type { FeatureContext } from './context';
import { CONTENT_COLLECTIONS, HTTP_ROUTES, type ContentCollection } from '../../contract';

/** An item in a listing: everything but the body and the client's vector (fetch `/{id}` for them). */
function listed(item: Item): Omit<Item, 'body' | 'vector'> {
  return Object.fromEntries(Object.entries(item).filter(([k]) => k !== 'body' && k !== 'vector')) as Omit<
    Item,
    'body' | 'vector'
  >;
}

/**
 * `GET /api/v1/{articles,projects,experiences}?limit=&offset=&tag=&date_from=&date_to=&sort=`: newest first (or as `sort` says), without
 * bodies; `GET /api/v1/{collection}/{id}`: one item (404 when absent or of another type).
 *
 * Routes are added to `r` (createFeatures passes one router for every group, so a request walks one).
 */
export function contentRouter(ctx: FeatureContext, r: Router = Router()): Router {
  for (const collection of Object.keys(CONTENT_COLLECTIONS) as ContentCollection[]) {
    const type = COLLECTION_ITEM_TYPES[collection];
    r.get(HTTP_ROUTES[CONTENT_COLLECTIONS[collection].list].path, async (req, res) => {
      const { limit, offset, tag, date_from, date_to, sort } = validate(listQuery, req.query);
      // The type's listing made ready in steps (its first read after a start from Redis sorts every item).
      await ctx.content.prepareListing(type);
      const filter = {
        ...(tag ? { tag } : {}),
        ...(date_from ? { date_from } : {}),
        ...(date_to ? { date_to } : {}),
      };
      const page = ctx.content.list(type, { limit, offset, filter, ...(sort ? { sort } : {}) });
      res.json({ items: page.items.map(listed), total: page.total, limit, offset });
    });
    r.get(HTTP_ROUTES[CONTENT_COLLECTIONS[collection].item].path, (req, res) => {
      const { id } = validate(itemIdParams, req.params);
      const item = ctx.content.get(id);
      if (!item || item.type !== type) throw new HttpError(404, 'not_found', `no ${type} with id "${id}"`);
      res.json(item);
    });
  }
  return r;
}
