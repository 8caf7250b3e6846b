import { Router, type Request } from 'express';
import type { Item, ItemType } from '../content/item';
import { HttpError, badRequest } from '../http/errors';
import type { FeatureContext } from './features';

/** A query parameter as one string; repeated parameters are refused. */
export function queryString(req: Request, name: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badRequest(`query parameter ${name} must be given once, as a string`, { field: name });
  return v;
}

/** An integer query parameter within [min, max], or the default. */
export function queryInt(req: Request, name: string, opts: { min: number; max: number; default: number }): number {
  const raw = queryString(req, name);
  if (raw === undefined || raw.trim() === '') return opts.default;
  if (!/^\d+$/.test(raw.trim())) throw badRequest(`${name} must be an integer from ${opts.min} to ${opts.max}`, { field: name });
  const n = Number(raw.trim());
  if (n < opts.min || n > opts.max) throw badRequest(`${name} must be an integer from ${opts.min} to ${opts.max}`, { field: name });
  return n;
}

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
 */
export function contentRouter(ctx: FeatureContext): Router {
  const r = Router();
  for (const [path, type] of COLLECTIONS) {
    r.get(path, (req, res) => {
      const limit = queryInt(req, 'limit', { min: 1, max: 100, default: 20 });
      const offset = queryInt(req, 'offset', { min: 0, max: 1_000_000, default: 0 });
      const tag = queryString(req, 'tag')?.trim() || undefined;
      const page = ctx.content.list(type, { limit, offset, ...(tag ? { tag } : {}) });
      res.json({ items: page.items.map(listed), total: page.total, limit, offset });
    });
    r.get(`${path}/:id`, (req, res) => {
      const item = ctx.content.get(req.params.id);
      if (!item || item.type !== type) throw new HttpError(404, 'not_found', `no ${type} with id "${req.params.id}"`);
      res.json(item);
    });
  }
  return r;
}
