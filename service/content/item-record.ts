import type { Item } from './item';
import { PLAIN_TEXT_VERSION, keepPlainText, plainTextOf } from './plain-text';

/**
 * An item as the stores write it: its fields plus the plain text of its body, derived at write
 * time (`plain_text`, with the `plain_text_version` of `plainText` that made it). The API and
 * exports never show these two fields: in memory the plain text is kept on the item under a
 * symbol (`plainTextOf`), and the item's JSON is its fields only.
 *
 * Why stored: cleaning 1 MB of Markdown takes tens of ms even in linear time, and a restart
 * would otherwise pay it for every item before the replica is ready (issue 29: 51 s for one
 * item while the clean-up was quadratic). Records written before this field existed, or by
 * another version of `plainText`, still load: their plain text is computed once, on first use,
 * and written with the item's next write or compaction.
 */
export interface ItemRecord extends Item {
  readonly plain_text?: string;
  readonly plain_text_version?: number;
}

/** The record a store writes for `item` (computes the plain text if the item has none yet). */
export function toRecord(item: Item): ItemRecord {
  return { ...item, plain_text: plainTextOf(item), plain_text_version: PLAIN_TEXT_VERSION };
}

/** The item of a stored record, its stored plain text kept when it is of this version. */
export function fromRecord(record: ItemRecord): Item {
  const { plain_text: text, plain_text_version: version, ...item } = record;
  if (typeof text === 'string' && version === PLAIN_TEXT_VERSION) keepPlainText(item, text);
  return item;
}
