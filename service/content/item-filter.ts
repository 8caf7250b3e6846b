import type { Item, ItemType } from './item';

/**
 * Which items a search, a listing or a chat's retrieval keeps: every given part must hold, and
 * a list part holds when any of its values does (`type: ['article', 'project']`). An empty or
 * absent part keeps everything. Pure data, so a cache key, a log line or a future
 * `delete_where` can carry it as it is.
 */
export interface ItemFilter {
  /** Items of any of these types. */
  readonly type?: readonly ItemType[];
  /** Items carrying any of these tags (compared lower-cased). */
  readonly tag?: readonly string[];
  /** Items whose day (`itemDay`) is this `YYYY-MM-DD` or later. */
  readonly date_from?: string;
  /** Items whose day (`itemDay`) is this `YYYY-MM-DD` or earlier. */
  readonly date_to?: string;
  /** Items whose day (`itemDay`) is strictly before this `YYYY-MM-DD` (`delete_where`'s form). */
  readonly date_before?: string;
}

/** The parts of a filter that a facet counts by (a disjunctive facet leaves its own part out). */
export type FacetName = 'type' | 'tag';
/** Every facet, in answer order. */
export const FACET_NAMES: readonly FacetName[] = ['type', 'tag'];

/**
 * The day an item is dated by, `YYYY-MM-DD`: its `date` (the date part of a date-time, as
 * written, without moving it to UTC), else the day of `created_at` (UTC).
 */
export function itemDay(item: Pick<Item, 'date' | 'created_at'>): string {
  return (item.date ?? item.created_at).slice(0, 10);
}

/**
 * A `YYYY-MM-DD` day as the integer YYYYMMDD, which orders days as the calendar does (the search
 * index keeps days so; a day that is not of that form counts as 0, before every real one).
 */
export function dayNumber(day: string): number {
  const n = Number(day.slice(0, 4)) * 10_000 + Number(day.slice(5, 7)) * 100 + Number(day.slice(8, 10));
  return Number.isFinite(n) ? n : 0;
}

/** The filter of parsed parameters (a search's, a chat's, a listing's), its absent or empty parts left out. */
export function filterOf(p: {
  readonly type?: readonly ItemType[];
  readonly tag?: readonly string[];
  readonly date_from?: string;
  readonly date_to?: string;
}): ItemFilter {
  return {
    ...(p.type?.length ? { type: p.type } : {}),
    ...(p.tag?.length ? { tag: p.tag } : {}),
    ...(p.date_from ? { date_from: p.date_from } : {}),
    ...(p.date_to ? { date_to: p.date_to } : {}),
  };
}

/** Whether a filter keeps every item (no part given). */
export function isEmptyFilter(f: ItemFilter | undefined): boolean {
  return (
    !f ||
    (!f.type?.length &&
      !f.tag?.length &&
      f.date_from === undefined &&
      f.date_to === undefined &&
      f.date_before === undefined)
  );
}

/** `f` without the part a facet counts by: what that facet's counts apply (disjunctive facets). */
export function withoutPart(f: ItemFilter, part: FacetName): ItemFilter {
  const rest = { ...f };
  delete rest[part];
  return rest;
}

/** `f` with its tags lower-cased and sorted, lists deduplicated and sorted, empty parts dropped (a cache key's form). */
export function normalFilter(f: ItemFilter | undefined): ItemFilter {
  if (!f) return {};
  const list = <T extends string>(xs: readonly T[] | undefined) => (xs?.length ? [...new Set(xs)].sort() : undefined);
  const type = list(f.type);
  const tag = list(f.tag?.map((t) => t.toLowerCase()));
  return {
    ...(type ? { type } : {}),
    ...(tag ? { tag } : {}),
    ...(f.date_from !== undefined ? { date_from: f.date_from } : {}),
    ...(f.date_to !== undefined ? { date_to: f.date_to } : {}),
    ...(f.date_before !== undefined ? { date_before: f.date_before } : {}),
  };
}

/** What `matches` reads of an item: a catalogue's lazy item gives these without being parsed (`listingFields`). */
export type FilterFields = Pick<Item, 'type' | 'tags' | 'date' | 'created_at'>;

/** Whether `item` passes `f` (the definition every faster check, such as the search index's, must agree with). */
export function matches(item: FilterFields, f: ItemFilter): boolean {
  if (f.type?.length && !f.type.includes(item.type)) return false;
  if (f.tag?.length) {
    const wanted = new Set(f.tag.map((t) => t.toLowerCase()));
    if (!item.tags.some((t) => wanted.has(t.toLowerCase()))) return false;
  }
  if (f.date_from !== undefined || f.date_to !== undefined || f.date_before !== undefined) {
    const day = itemDay(item);
    if (f.date_from !== undefined && day < f.date_from) return false;
    if (f.date_to !== undefined && day > f.date_to) return false;
    if (f.date_before !== undefined && day >= f.date_before) return false;
  }
  return true;
}
