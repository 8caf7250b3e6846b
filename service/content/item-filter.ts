import type { Item, ItemType } from './item';

/**
 * Which items an operation applies to (`delete_where`): every field given must hold, so the
 * filter is the conjunction of its fields. An empty filter (which would match everything) is
 * refused by the request schema, never passed here.
 */
export interface ItemFilter {
  /** The item's type. */
  readonly type?: ItemType;
  /** A tag the item carries, case-insensitive (as search and listings match tags). */
  readonly tag?: string;
  /** `YYYY-MM-DD`: the item's day (`date`, else `created_at`) is strictly before it. */
  readonly date_before?: string;
}

/** What `matches` reads of an item: a catalogue's lazy item gives these without being parsed (`listingFields`). */
export type FilterFields = Pick<Item, 'type' | 'tags' | 'date' | 'created_at'>;

/**
 * Whether `item` passes `filter`. The day compared is the first ten characters of `date` (a
 * calendar date or an ISO date-time, as validated) or else of `created_at`: the day the listing
 * sorts by, so "before 2026-01-01" deletes what a listing shows before that day.
 */
export function matches(filter: ItemFilter, item: FilterFields): boolean {
  if (filter.type !== undefined && item.type !== filter.type) return false;
  if (filter.tag !== undefined) {
    const tag = filter.tag.toLowerCase();
    if (!item.tags.some((t) => t.toLowerCase() === tag)) return false;
  }
  if (filter.date_before !== undefined && (item.date ?? item.created_at).slice(0, 10) >= filter.date_before)
    return false;
  return true;
}
