import type { Item } from '../item';
import { fromRecord, type ItemRecord } from '../item-record';
import { unwrapItem } from '../lazy-item';
import { PLAIN_TEXT_VERSION, keepPlainText, plainTextOf } from '../plain-text';

/**
 * The items of a put or snapshot record. Written as the items' own fields plus, beside them,
 * their plain texts (`plain`, `null` where the plain text is the body itself, as it is for a
 * body without Markdown) of `plain_text_version`: a load then keeps the parsed objects as the
 * items (no copy per item) and reads no body twice. Records written before carry the plain text
 * inside each item (`ItemRecord`, no `plain`); both load. A version that knows only the older
 * form reads the items of the newer one and computes their plain text at first use.
 */
export interface ItemsRecord {
  items: ItemRecord[];
  plain?: Array<string | null>;
  plain_text_version?: number;
}
/** A write's batch, appended to the log. */
export interface PutRecord extends ItemsRecord {
  op: 'put';
}
/** A part of a snapshot (its items in chunks). */
export interface SnapshotRecord extends ItemsRecord {
  op: 'snapshot';
}
/** The last record of a complete snapshot: how many items it holds. */
export interface EndRecord {
  op: 'end';
  count: number;
}

/**
 * The items and their plain texts, as a record holds them; `step()` (time-steps.ts) after each
 * item: for the 10,000 items of a full upload this was ~5 ms more of the write's one step.
 */
export async function itemsRecord(
  stored: readonly Item[],
  step: () => Promise<void> | undefined,
): Promise<ItemsRecord> {
  const items: ItemRecord[] = [];
  const plain: Array<string | null> = [];
  for (const s of stored) {
    const i = unwrapItem(s);
    const text = plainTextOf(i);
    items.push(i);
    plain.push(text === i.body ? null : text);
    await step();
  }
  return { items, plain, plain_text_version: PLAIN_TEXT_VERSION };
}

/** The items of a record (either form), each with its stored plain text when it is of this version. */
export function recordItems(r: ItemsRecord): Item[] {
  const { items, plain } = r;
  if (!Array.isArray(plain) || plain.length !== items.length) return items.map(fromRecord);
  if (r.plain_text_version !== PLAIN_TEXT_VERSION) return items;
  for (let k = 0; k < items.length; k++) keepPlainText(items[k], plain[k] ?? items[k].body);
  return items;
}

/** Whether a decoded record is a put record. */
export function isPutRecord(r: unknown): r is PutRecord {
  return (r as PutRecord | null)?.op === 'put' && Array.isArray((r as PutRecord).items);
}
/** Whether a decoded record is a snapshot record. */
export function isSnapshotRecord(r: unknown): r is SnapshotRecord {
  return (r as SnapshotRecord | null)?.op === 'snapshot' && Array.isArray((r as SnapshotRecord).items);
}
/** Whether a decoded record is a snapshot's end record. */
export function isEndRecord(r: unknown): r is EndRecord {
  return (r as EndRecord | null)?.op === 'end' && typeof (r as EndRecord).count === 'number';
}
