import { validateItem, type Item, type ItemChange, type ItemInput, type ItemIssue } from './item';
import type { ItemFilter } from './item-filter';

/*
 * The operations of one write (`POST /api/ingest-batch`: `delete_where`, `delete`, `patch`,
 * `items`) and the planning that does not need the in-memory copy's steps: which ids two
 * operations share, and what a patch makes of a stored item. ContentService.write applies them.
 *
 * One request is one atomic store write. The ids of its operations are disjoint (an id in two of
 * them is refused), so the result does not depend on the order they are applied in; they are
 * planned against the in-memory copy as it is when the request runs, in the order
 * `delete_where`, `delete`, `patch`, `items`, and reported in that order.
 */

/** Fields a patch may give; `id` names the item, the timestamps are the service's. */
export const PATCHABLE_FIELDS = ['type', 'title', 'body', 'summary', 'tags', 'url', 'date', 'vector'] as const;

/** One patch: the item's id and the fields that replace its stored ones (absent fields are kept). */
export interface ItemPatch {
  readonly id: string;
  /** Raw values, validated with the whole patched item (`validateItem`), as ingest validates. */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** What one write does. Every part optional; ids are distinct across `delete`, `patch` and `items`. */
export interface ContentOperations {
  /** Validated items, added or replacing the item of their id. */
  readonly items?: ReadonlyArray<ItemInput & { id: string }>;
  /** Ids to delete; an id the content does not hold is reported `not_found`, not refused. */
  readonly delete?: readonly string[];
  /** Deletes every item that matches (evaluated on the in-memory copy when the write runs). */
  readonly deleteWhere?: ItemFilter;
  readonly patch?: readonly ItemPatch[];
}

/** An item written by `items` or `patch`, and what it did. */
export interface WrittenItem {
  readonly item: Item;
  readonly change: ItemChange;
}

/** What one write did, per operation. */
export interface OperationsOutcome {
  /** The ids `delete_where` deleted, in the in-memory copy's order. */
  readonly deletedWhere: readonly string[];
  /** The ids of `delete` that were held and are deleted now. */
  readonly deleted: readonly string[];
  /** The ids of `delete` the content did not hold (nothing to do: deletes are idempotent). */
  readonly notFound: readonly string[];
  /** One per patch, in order (`unchanged` when the fields given were those stored). */
  readonly patched: readonly WrittenItem[];
  /** One per item, in order. */
  readonly items: readonly WrittenItem[];
}

/**
 * A write refused as a whole, nothing applied: `code` is the answer's `error`, `field` the
 * request field at fault (a dotted path such as `patch.2.title`), `issues` the item's problems
 * for a patch that breaks a field rule.
 */
export class OperationRefused extends Error {
  constructor(
    readonly code: 'invalid_item' | 'unknown_id' | 'id_in_two_operations' | 'unknown_field',
    readonly field: string,
    message: string,
    readonly issues?: readonly ItemIssue[],
  ) {
    super(message);
    this.name = 'OperationRefused';
  }
}

/** Where an id is named in a request: `delete.3`, `patch.0.id`, `items.7.id`. */
type Place = string;

/**
 * Refuses ids named by more than one of `delete`, `patch` and `items` (or twice in `patch`):
 * applied in any order one would undo the other. Names both places. Duplicates within `delete`
 * are harmless and left to `write` (reported once).
 */
export function refuseSharedIds(ops: ContentOperations): void {
  const seen = new Map<string, Place>();
  const name = (id: string, place: Place) => {
    const first = seen.get(id);
    if (first !== undefined)
      throw new OperationRefused(
        'id_in_two_operations',
        place,
        `id "${id}" is named by ${first} and ${place}; nothing was applied: one request names an id once`,
      );
    seen.set(id, place);
  };
  const deletes = new Set<string>();
  (ops.delete ?? []).forEach((id, k) => {
    if (!deletes.has(id)) name(id, `delete.${k}`);
    deletes.add(id);
  });
  (ops.patch ?? []).forEach((p, k) => name(p.id, `patch.${k}.id`));
  (ops.items ?? []).forEach((i, k) => name(i.id, `items.${k}.id`));
}

/** The conflict of an id `delete_where` matches that another operation names (`refuseSharedIds`' message). */
export function matchedAndNamed(id: string, place: Place): OperationRefused {
  return new OperationRefused(
    'id_in_two_operations',
    place,
    `id "${id}" is matched by delete_where and named by ${place}; nothing was applied: one request names an id once`,
  );
}

/**
 * The item patch `k` makes of `stored`: its fields with the given ones in their place, validated
 * whole as ingest validates (so a patch cannot store what an ingest would refuse). Throws
 * `OperationRefused` naming `patch.k.<field>`: an unknown field, `id` or a timestamp among the
 * fields, or a field rule the patched item breaks.
 */
export function patchedInput(p: ItemPatch, k: number, stored: Item): ItemInput & { id: string } {
  for (const key of Object.keys(p.fields)) {
    if (!(PATCHABLE_FIELDS as readonly string[]).includes(key))
      throw new OperationRefused(
        'unknown_field',
        `patch.${k}.${key}`,
        `patch.${k}.${key}: a patch gives some of ${PATCHABLE_FIELDS.join(', ')} (the id names the item; timestamps are the service's); nothing was applied`,
      );
  }
  const { id, type, title, body, summary, tags, url, date, vector } = stored;
  // The vector's length is checked where the patch is read (the route knows EMBEDDINGS_DIMENSIONS).
  const v = validateItem({ id, type, title, body, summary, tags, url, date, vector, ...p.fields });
  if (!v.ok) {
    const issues = v.issues.map((i) => ({ field: `patch.${k}${i.field ? `.${i.field}` : ''}`, message: i.message }));
    const first = issues[0];
    throw new OperationRefused(
      'invalid_item',
      first?.field ?? `patch.${k}`,
      `${first?.field ?? `patch.${k}`}: ${first?.message ?? 'invalid'}; nothing was applied`,
      issues,
    );
  }
  return v.item;
}

/** The unknown id of patch `k`: refused, nothing applied (a patch never creates an item). */
export function unknownPatch(id: string, k: number): OperationRefused {
  return new OperationRefused(
    'unknown_id',
    `patch.${k}.id`,
    `patch.${k}.id: no item "${id}" to patch; nothing was applied (send it in items to create it)`,
  );
}
