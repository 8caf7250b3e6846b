import { Router } from 'express';
import type { Item, ItemType } from '../content/item';
import { HttpError } from '../http/errors';
import { itemIdParams, listQuery } from '../http/contract/content';
import { validate } from '../http/contract/validate';
import type { FeatureContext } from './context';

/** Paths of the three collections. */
export const COLLECTIONS: ReadonlyArray<readonly [string, ItemType]> = [
  ['/api/v1/articles', 'article'],
  ['/api/v1/projects', 'project'],
  ['/api/v1/experiences', 'experience'],
];

/** An item in a listing: everything but the body (fetch `/{id}` for it). */
function listed(item: Item): Omit<Item, 'body'> {
  return Object.fromEntries(Object.entries(item).filter(([k]) => k !== 'body')) as Omit<Item, 'body'>;
}

/**
 * `GET /api/v1/{articles,projects,experiences}?limit=&offset=&tag=`: newest first, without
 * bodies; `GET /api/v1/{collection}/{id}`: one item (404 when absent or of another type).
 *
 * Routes are added to `r` (createFeatures passes one router for every group, so a request walks one).
 */
export function contentRouter(ctx: FeatureContext, r: Router = Router()): Router {
  for (const [path, type] of COLLECTIONS) {
    r.get(path, (req, res) => {
      const { limit, offset, tag } = validate(listQuery, req.query);
      const page = ctx.content.list(type, { limit, offset, ...(tag ? { tag } : {}) });
      res.json({ items: page.items.map(listed), total: page.total, limit, offset });
    });
    r.get(`${path}/:id`, (req, res) => {
      const { id } = validate(itemIdParams, req.params);
      const item = ctx.content.get(id);
      if (!item || item.type !== type) throw new HttpError(404, 'not_found', `no ${type} with id "${id}"`);
      res.json(item);
    });
  }
  return r;
}
