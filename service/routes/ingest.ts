import { Router, type Response } from 'express';
import type { z } from 'zod';
import { batchVocabularyProblem, validateItem, type ItemChange, type ItemInput, type ItemIssue } from '../content/item';
import { MAX_NAMED_COLLIDING, describeItems, idCollisions, type CollidingItem } from '../content/id-collisions';
import { MAX_BATCH_ITEMS, MAX_BATCH_OPERATIONS, batchRequest } from '../http/contract/ingest';
import { OperationRefused } from '../content/operations';
import { validate } from '../http/contract/validate';
import { HttpError } from '../http/errors';
import { jsonBody } from '../http/json-body';
import { jsonObject } from '../http/json-object';
import { stepper } from '../lib/yield-to-loop';
import { requireWriteAccess } from './auth';
import type { FeatureContext } from './context';
import { invalidItem, storeWrite } from './write-errors';
import { HTTP_ROUTES } from '../../contract';

export { MAX_BATCH_ITEMS } from '../http/contract/ingest';

/** Outcome of one item of a batch. */
export type BatchResult =
  | { index: number; status: 'stored'; id: string; updated_at: string; change: ItemChange }
  | {
      index: number;
      status: 'invalid';
      field: string;
      message: string;
      issues: readonly ItemIssue[];
      /** For an id shared within the batch: the other items that have it (the first `MAX_NAMED_COLLIDING`). */
      collides_with?: readonly CollidingItem[];
      /** How many other items share it, all told. */
      collides_with_count?: number;
    };

/**
 * Takes the items of `valid` whose ids collide within the batch out of it and reports each as
 * invalid (`field: id`), naming every item that shares the id by index and title. All of a group
 * are refused, none chosen: stored together each would replace the one before while all were
 * reported stored, and which one the sender meant to keep is not ours to guess.
 */
function refuseCollisions(
  valid: Array<{ index: number; input: ItemInput & { id: string } }>,
  results: BatchResult[],
): void {
  const collisions = idCollisions(valid.map((v) => ({ index: v.index, title: v.input.title, id: v.input.id })));
  if (!collisions.length) return;
  const refused = new Set<number>();
  for (const c of collisions) {
    const message = `id "${c.id}" is shared by ${describeItems(c.items)} of this batch; none of them was stored (each would replace the one before): give each a distinct id or title`;
    for (const i of c.items) {
      refused.add(i.index);
      results.push({
        index: i.index,
        status: 'invalid',
        field: 'id',
        message,
        issues: [{ field: 'id', message }],
        collides_with: c.items.filter((o) => o.index !== i.index).slice(0, MAX_NAMED_COLLIDING),
        collides_with_count: c.items.length - 1,
      });
    }
  }
  const kept = valid.filter((v) => !refused.has(v.index));
  valid.splice(0, valid.length, ...kept);
}

/**
 * A patch's `vector` of another length than `EMBEDDINGS_DIMENSIONS`: 422 naming `patch.k.vector`,
 * nothing applied (its other rules are checked with the patched item: `patchedInput`).
 */
function refuseVectorLengths(patches: ReadonlyArray<Record<string, unknown>>, dims: number): void {
  patches.forEach((p, k) => {
    const v = p.vector;
    if (!Array.isArray(v) || v.length === dims) return;
    const field = `patch.${k}.vector`;
    throw new HttpError(
      422,
      'invalid_item',
      `${field}: vector holds ${v.length} numbers; EMBEDDINGS_DIMENSIONS is ${dims}; nothing was applied`,
      { field, issues: [{ field, message: `vector holds ${v.length} numbers; EMBEDDINGS_DIMENSIONS is ${dims}` }] },
    );
  });
}

/**
 * A request with `delete`, `delete_where` or `patch` (issue 39): all or nothing. An invalid item
 * refuses it whole (422 `invalid_items` with the per-item results), as does a refused operation
 * (`OperationRefused`: 422 naming the field); otherwise one store write applies everything
 * (ContentService.write) and the answer says what each operation did: 201 when it held items,
 * 200 when it held only operations.
 */
async function applyOperations(
  ctx: FeatureContext,
  request: z.output<typeof batchRequest>,
  valid: ReadonlyArray<{ index: number; input: ItemInput & { id: string } }>,
  results: BatchResult[],
  res: Response,
): Promise<void> {
  if (results.length) {
    results.sort((a, b) => a.index - b.index);
    const first = results[0] as Extract<BatchResult, { status: 'invalid' }>;
    res.status(422).json({
      error: 'invalid_items',
      message: `nothing was applied (a request with delete, delete_where or patch is all or nothing); item ${first.index}: ${first.field ? `${first.field}: ` : ''}${first.message}`,
      stored: 0,
      failed: results.length,
      results,
    });
    return;
  }
  refuseVectorLengths(request.patch ?? [], ctx.deps.settings.embeddings.dimensions);
  const out = await storeWrite(async () => {
    try {
      return await ctx.content.write({
        items: valid.map((v) => v.input),
        ...(request.delete ? { delete: request.delete } : {}),
        ...(request.delete_where
          ? {
              // One type and one tag a request: the search side's filter holds lists.
              deleteWhere: {
                ...(request.delete_where.type ? { type: [request.delete_where.type] } : {}),
                ...(request.delete_where.tag ? { tag: [request.delete_where.tag] } : {}),
                ...(request.delete_where.date_before ? { date_before: request.delete_where.date_before } : {}),
              },
            }
          : {}),
        ...(request.patch ? { patch: request.patch.map(({ id, ...fields }) => ({ id, fields })) } : {}),
      });
    } catch (e) {
      if (e instanceof OperationRefused)
        throw new HttpError(422, e.code, e.message, { field: e.field, ...(e.issues ? { issues: e.issues } : {}) });
      throw e;
    }
  });
  const stored: BatchResult[] = out.items.map(({ item, change }, k) => ({
    index: valid[k].index,
    status: 'stored',
    id: item.id,
    updated_at: item.updated_at,
    change,
  }));
  const where = out.deletedWhere;
  res.status(valid.length ? 201 : 200).json({
    stored: stored.length,
    failed: 0,
    results: stored,
    operations: {
      deleted: out.deleted,
      not_found: out.notFound,
      patched: out.patched.map(({ item, change }) => ({ id: item.id, updated_at: item.updated_at, change })),
      ...(request.delete_where
        ? {
            delete_where: {
              count: where.length,
              ids: where.slice(0, MAX_BATCH_OPERATIONS),
              truncated: where.length > MAX_BATCH_OPERATIONS,
            },
          }
        : {}),
    },
  });
}

/** What a 415 or 400 on an ingest suggests sending (the OpenAPI example is http/contract/item.ts's `ITEM_EXAMPLE`). */
const ITEM_BODY_HINT = '{"type": "article", "title": "Hello", "body": "# Hello\\n..."}';

/**
 * `POST /api/ingest` (one item → 201 with the stored item) and `POST /api/ingest-batch`
 * (`{items: [...]}`, up to 1,000 → per-item results: 201 all stored, 207 some stored, 422 none).
 * Both need write access, checked before the body is read; the body may be up to
 * `MAX_BODY_SIZE`. The store takes the valid items of a batch in one atomic write.
 *
 * Routes are added to `r` (createFeatures passes one router for every group, so a request walks one).
 */
export function ingestRouter(ctx: FeatureContext, r: Router = Router()): Router {
  const guard = requireWriteAccess(ctx.deps.settings);
  const body = jsonBody(ctx.deps.settings.service.maxBodyBytes);
  const dims = ctx.deps.settings.embeddings.dimensions;
  r.post(HTTP_ROUTES.ingest.path, guard, body, async (req, res) => {
    const v = validateItem(jsonObject(req, ITEM_BODY_HINT), { vectorDimensions: dims });
    if (!v.ok) throw invalidItem(v.issues);
    const [item] = await storeWrite(() => ctx.content.ingest([v.item]));
    res.status(201).json(item);
  });
  r.post(HTTP_ROUTES.ingestBatch.path, guard, body, async (req, res) => {
    const request = validate(batchRequest, jsonObject(req, `{"items": [${ITEM_BODY_HINT}]}`));
    const items = request.items ?? [];
    const withOperations =
      request.delete !== undefined || request.delete_where !== undefined || request.patch !== undefined;
    if (items.length > MAX_BATCH_ITEMS) {
      throw new HttpError(
        413,
        'batch_too_large',
        `items holds ${items.length} items; at most ${MAX_BATCH_ITEMS} per batch`,
        { field: 'items' },
      );
    }
    const results: BatchResult[] = [];
    const valid: Array<{ index: number; input: ItemInput & { id: string } }> = [];
    // An item at a time, in steps of the event loop: a batch may hold 10 MB of text, whose
    // validation, word counts and plain texts took ~0.6 s in one step.
    const step = stepper();
    for (let index = 0; index < items.length; index++) {
      const v = validateItem(items[index], { vectorDimensions: dims });
      if (v.ok) valid.push({ index, input: v.item });
      else
        results.push({
          index,
          status: 'invalid',
          field: v.issues[0]?.field ?? '',
          message: v.issues[0]?.message ?? '',
          issues: v.issues,
        });
      await step();
    }
    refuseCollisions(valid, results);
    const vocabulary = await batchVocabularyProblem(
      valid.map((x) => x.input),
      step,
    );
    if (vocabulary) throw new HttpError(413, 'batch_vocabulary_too_large', vocabulary, { field: 'items' });
    if (withOperations) {
      await applyOperations(ctx, request, valid, results, res);
      return;
    }
    if (valid.length) {
      const stored = await storeWrite(() => ctx.content.ingestWithChanges(valid.map((x) => x.input)));
      stored.forEach(({ item, change }, i) =>
        results.push({ index: valid[i].index, status: 'stored', id: item.id, updated_at: item.updated_at, change }),
      );
    }
    results.sort((a, b) => a.index - b.index);
    const failed = items.length - valid.length;
    if (!valid.length) {
      // None stored: an error like every other 4xx ({error, message}), with the per-item results.
      const first = results[0] as Extract<BatchResult, { status: 'invalid' }>;
      res.status(422).json({
        error: 'invalid_items',
        message: `none of the ${items.length} items was stored; item ${first.index}: ${first.field ? `${first.field}: ` : ''}${first.message}`,
        stored: 0,
        failed,
        results,
      });
      return;
    }
    res.status(failed === 0 ? 201 : 207).json({ stored: valid.length, failed, results });
  });
  return r;
}
