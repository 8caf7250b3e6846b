import { ITEM_TYPES, type Item, type ItemType } from '../content/item';
import { plainText } from '../content/plain-text';
import { grow } from './growable';

const NO_TAGS: readonly string[] = [];

/** Tags lower-cased (the shared empty list when there are none). */
export const lowerTags = (tags: readonly string[]): readonly string[] => (tags.length ? tags.map((t) => t.toLowerCase()) : NO_TAGS);

/** What the index keeps of an indexed item for filters and snippets. */
export interface DocMeta {
  readonly type: ItemType;
  /** Lower-cased. */
  readonly tags: readonly string[];
  /** The body's plain text. */
  readonly body: string;
  readonly summary: string;
}

/**
 * The embedded index's metadata of its documents (type, lower-cased tags, plain body, summary),
 * held in columns by slot instead of an object per document: a few arrays for the garbage
 * collector to look at, and nothing per document that survives a scavenge at ingest. A slot of a
 * removed document is reused.
 *
 * A document restored from a persisted segment keeps its item instead (`setRestored`): its tags,
 * body and summary are read from it at first use, so a start does not read every item (a store
 * may parse items lazily), and its body is made plain at its first snippet.
 */
export class DocMetaColumns {
  private readonly slots = new Map<string, number>();
  private readonly free: number[] = [];
  private types = new Uint8Array(64);
  // 1 once `bodies[slot]` is the plain text (a restored item's body is made plain at first use).
  private plain = new Uint8Array(64);
  private bodies: Array<string | undefined> = [];
  private summaries: Array<string | undefined> = [];
  private tags: Array<readonly string[] | undefined> = [];
  private items: Array<Item | undefined> = [];

  /** Documents held. */
  get size(): number {
    return this.slots.size;
  }

  has(id: string): boolean {
    return this.slots.has(id);
  }

  /** Enters (or replaces) the metadata of `id`. */
  set(id: string, meta: DocMeta): void {
    const s = this.slot(id, meta.type);
    this.plain[s] = 1;
    this.bodies[s] = meta.body;
    this.summaries[s] = meta.summary;
    this.tags[s] = meta.tags;
    this.items[s] = undefined;
  }

  /** Enters (or replaces) `item` restored from a segment: its metadata is read from it when needed. */
  setRestored(item: Item): void {
    const s = this.slot(item.id, item.type);
    this.plain[s] = 0;
    this.bodies[s] = undefined;
    this.summaries[s] = undefined;
    this.tags[s] = undefined;
    this.items[s] = item;
  }

  /** Forgets `id`; false if it was not held. */
  delete(id: string): boolean {
    const s = this.slots.get(id);
    if (s === undefined) return false;
    this.slots.delete(id);
    this.bodies[s] = this.summaries[s] = this.tags[s] = this.items[s] = undefined;
    this.free.push(s);
    return true;
  }

  /** Whether `id` is held with `type` (if given) and the lower-cased `tag` (if given). */
  matches(id: string, type: ItemType | undefined, tag: string | undefined): boolean {
    const s = this.slots.get(id);
    if (s === undefined) return false;
    if (type && ITEM_TYPES[this.types[s]] !== type) return false;
    return !tag || this.tagsAt(s).includes(tag);
  }

  /** The plain body and summary of `id` (its body made plain now if it is not yet), or undefined. */
  text(id: string): { body: string; summary: string } | undefined {
    const s = this.slots.get(id);
    if (s === undefined) return undefined;
    const item = this.items[s];
    if (!this.plain[s]) {
      this.bodies[s] = plainText(item!.body);
      this.plain[s] = 1;
    }
    return { body: this.bodies[s]!, summary: this.summaries[s] ?? item?.summary ?? '' };
  }

  private tagsAt(s: number): readonly string[] {
    return (this.tags[s] ??= lowerTags(this.items[s]!.tags));
  }

  private slot(id: string, type: ItemType): number {
    let s = this.slots.get(id);
    if (s === undefined) {
      s = this.free.pop() ?? this.slots.size;
      this.slots.set(id, s);
      this.types = grow(this.types, s + 1);
      this.plain = grow(this.plain, s + 1);
    }
    this.types[s] = ITEM_TYPES.indexOf(type);
    return s;
  }
}
