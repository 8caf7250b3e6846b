import { Router, type Request } from 'express';
import { validateItem, type Item, type ItemInput, type ItemIssue } from '../content/item';
import { StoreUnavailableError } from '../content/store';
import { HttpError, badRequest } from '../http/errors';
import { requireWriteAccess } from './auth';
import type { FeatureContext } from './features';

/** Most items in one `POST /api/ingest-batch`. */
export const MAX_BATCH_ITEMS = 1000;

/** 422 for an invalid item, naming the first bad field and listing every issue. */
export function invalidItem(issues: readonly ItemIssue[], where = ''): HttpError {
  const first = issues[0];
  const field = first?.field ?? '';
  return new HttpError(422, 'invalid_item', `${where}${field ? `${field}: ` : ''}${first?.message ?? 'invalid item'}`, {
    field,
    issues,
  });
}

/** Runs a store write; an unavailable store becomes 503 with the reason. */
export async function storeWrite<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (e instanceof StoreUnavailableError) throw new HttpError(503, 'store_unavailable', e.message);
    throw e;
  }
}

/** The JSON body as an object, or 415/400 saying what to send. */
export function jsonObject(req: Request, example: string): Record<string, unknown> {
  if (!req.is('application/json') && !req.is('application/*+json')) {
    throw new HttpError(415, 'unsupported_media_type', `send JSON with Content-Type: application/json, e.g. ${example}`);
  }
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest(`the body must be a JSON object, e.g. ${example}`, { field: 'body' });
  }
  return body as Record<string, unknown>;
}

/** Outcome of one item of a batch. */
export type BatchResult =
  | { index: number; status: 'stored'; id: string; updated_at: string }
  | { index: number; status: 'invalid'; field: string; message: string; issues: readonly ItemIssue[] };

const ITEM_EXAMPLE = '{"type": "article", "title": "Hello", "body": "# Hello\\n..."}';

/**
 * `POST /api/ingest` (one item → 201 with the stored item) and `POST /api/ingest-batch`
 * (`{items: [...]}`, up to 1,000 → per-item results: 201 all stored, 207 some stored, 422 none).
 * Both need write access; the store takes the valid items of a batch in one atomic write.
 */
export function ingestRouter(ctx: FeatureContext): Router {
  const r = Router();
  const guard = requireWriteAccess(ctx.deps.settings);
  r.post('/api/ingest', guard, async (req, res) => {
    const v = validateItem(jsonObject(req, ITEM_EXAMPLE));
    if (!v.ok) throw invalidItem(v.issues);
    const [item] = await storeWrite(() => ctx.content.ingest([v.item]));
    res.status(201).json(item);
  });
  r.post('/api/ingest-batch', guard, async (req, res) => {
    const body = jsonObject(req, `{"items": [${ITEM_EXAMPLE}]}`);
    const items = body.items;
    if (!Array.isArray(items)) throw badRequest('items is required: an array of items', { field: 'items' });
    if (items.length === 0) throw badRequest('items is empty: send at least one item', { field: 'items' });
    if (items.length > MAX_BATCH_ITEMS) {
      throw new HttpError(413, 'batch_too_large', `items holds ${items.length} items; at most ${MAX_BATCH_ITEMS} per batch`, { field: 'items' });
    }
    const results: BatchResult[] = [];
    const valid: Array<{ index: number; input: ItemInput & { id: string } }> = [];
    items.forEach((raw, index) => {
      const v = validateItem(raw);
      if (v.ok) valid.push({ index, input: v.item });
      else results.push({ index, status: 'invalid', field: v.issues[0]?.field ?? '', message: v.issues[0]?.message ?? '', issues: v.issues });
    });
    if (valid.length) {
      const stored = await storeWrite(() => ctx.content.ingest(valid.map((x) => x.input)));
      stored.forEach((item: Item, i) => results.push({ index: valid[i].index, status: 'stored', id: item.id, updated_at: item.updated_at }));
    }
    results.sort((a, b) => a.index - b.index);
    const failed = items.length - valid.length;
    const status = failed === 0 ? 201 : valid.length ? 207 : 422;
    res.status(status).json({ stored: valid.length, failed, results });
  });
  return r;
}
