import type { Item, ItemType } from '../content/item';
import { dayNumber, itemDay } from '../content/item-filter';
import type { DocAttributes } from './doc-columns';

/*
 * What the embedded index keeps of each document beside its postings (index-lifecycle.ts): the
 * attributes filters and sorts read, and the body and summary snippets are cut from, entered
 * lazily for documents restored from a persisted segment.
 */

/** A document without tags. */
const NO_TAGS: readonly string[] = [];

/** What a hit's filter, sort and snippet read of a document. */
export interface DocMeta extends DocAttributes {
  /** The body as plain text once `plain`; until then as stored (markdown), made plain at its first snippet. */
  body: string;
  plain: boolean;
  readonly summary: string;
}

/**
 * `tags` lower-cased: the item's own array when every tag already is (an array and its elements'
 * store fewer per document for a mark-compact to visit: at 1M documents most items hold tags).
 */
export const lowerTags = (tags: readonly string[]): readonly string[] =>
  !tags.length ? NO_TAGS : tags.every((t) => t === t.toLowerCase()) ? tags : tags.map((t) => t.toLowerCase());

/** The day (`itemDay` as `dayNumber`) and update time of an item, as `DocAttributes` keeps them. */
export const datesOf = (item: Item): { day: number; updated: number } => ({
  day: dayNumber(itemDay(item)),
  updated: Date.parse(item.updated_at),
});

/**
 * The metadata of a document taken from a persisted segment: read from its item when first
 * needed, so that a start does not read every item (a store may parse items lazily).
 */
export class RestoredMeta implements DocMeta {
  plain = false;
  private lowered: readonly string[] | undefined;
  private text: string | undefined;
  constructor(
    readonly type: ItemType,
    private readonly item: Item,
  ) {}
  get tags(): readonly string[] {
    return (this.lowered ??= lowerTags(this.item.tags));
  }
  get body(): string {
    return this.text ?? this.item.body;
  }
  set body(text: string) {
    this.text = text;
  }
  get summary(): string {
    return this.item.summary ?? '';
  }
  get day(): number {
    return dayNumber(itemDay(this.item));
  }
  get updated(): number {
    return Date.parse(this.item.updated_at);
  }
}
