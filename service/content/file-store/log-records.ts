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
/**
 * A write, appended to the log: its items, and the ids it deleted (`removed`, absent when none;
 * disjoint from the items). Puts and deletes of one write are one record, so a crash keeps both
 * or neither. A version without deletes reads such a record's items and ignores `removed`.
 */
export interface PutRecord extends ItemsRecord {
  op: 'put';
  removed?: string[];
}
/** A part of a snapshot (its items in chunks). */
export interface SnapshotRecord extends ItemsRecord {
  op: 'snapshot';
}
/**
 * The last record of a complete snapshot: how many items it holds, and whether it was written
 * while items were missing (`lossy`: after a start that found a snapshot missing or files
 * damaged, until older files were merged back in). A whole snapshot replaces older generations
 * at a start (deleted items stay deleted); a lossy one is merged with them instead, so the file
 * an operator puts back (the missing snapshot, a backup) restores what was lost.
 */
export interface EndRecord {
  op: 'end';
  count: number;
  lossy?: boolean;
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
/** The ids a put record deleted (none when it holds no well-formed `removed`). */
export function removedIds(r: PutRecord): readonly string[] {
  const { removed } = r;
  return Array.isArray(removed) ? removed.filter((id): id is string => typeof id === 'string') : [];
}

/** Whether a decoded record is a snapshot record. */
export function isSnapshotRecord(r: unknown): r is SnapshotRecord {
  return (r as SnapshotRecord | null)?.op === 'snapshot' && Array.isArray((r as SnapshotRecord).items);
}
/** Whether a decoded record is a snapshot's end record. */
export function isEndRecord(r: unknown): r is EndRecord {
  return (r as EndRecord | null)?.op === 'end' && typeof (r as EndRecord).count === 'number';
}
