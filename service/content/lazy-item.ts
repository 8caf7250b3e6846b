import { KNOWN_FINGERPRINT } from './item-fingerprint';
import type { Item, ItemType } from './item';
import { fromRecord, type ItemRecord } from './item-record';
import { keepPlainText } from './plain-text';

/** `plainStart` of an entry whose record stores `null`: the plain text is the body itself. */
export const PLAIN_IS_BODY = -1;
/** `plainStart` of an entry whose record stores no plain text of this version: computed at first use. */
export const PLAIN_ABSENT = -2;
/** `plainStart` of an entry in the older record form (`ItemRecord`: the plain text inside the item). */
export const OLD_FORM = -3;

/**
 * What a catalogue knows of its items for listings (content-catalogue.ts): each item's dates and
 * tags, and its place in the listing of every item (by type, newest first: `rank`).
 */
export interface ListingKeys {
  /** Entry `i`'s `date` (empty when it has none), `created_at` and `updated_at`, `\n`-separated: `dates[dateAt[i], dateAt[i + 1])`. */
  readonly dates: Buffer;
  readonly dateAt: Uint32Array;
  /** The distinct tags; entry `i`'s are `tagNames[tagIds[tagAt[i] … tagAt[i + 1] − 1]]`. */
  readonly tagNames: readonly string[];
  readonly tagAt: Uint32Array;
  readonly tagIds: Uint32Array;
  /** Entry `i`'s place in the listing of every entry (by type, then newest first). */
  readonly rank: Uint32Array;
}

/** An entry's listing keys, decoded at first use. */
interface Keys {
  readonly date: string | undefined;
  readonly created_at: string;
  readonly updated_at: string;
  readonly tags: readonly string[];
}

/**
 * What a lazy item knows without parsing (its id, type, fingerprint; with the catalogue's listing
 * keys, its dates, tags and listing rank: entry `entry` of `listing`) and where its record is: the
 * content file's bytes `src`, its JSON object `src[start, end)`, its plain text's JSON string
 * `src[plainStart, plainEnd)` or `PLAIN_IS_BODY`, `PLAIN_ABSENT`, `OLD_FORM`.
 */
interface State {
  readonly id: string;
  readonly type: ItemType;
  readonly fingerprint: number;
  readonly listing: ListingKeys | undefined;
  readonly entry: number;
  keys: Keys | undefined;
  src: Buffer | undefined;
  readonly start: number;
  readonly end: number;
  readonly plainStart: number;
  readonly plainEnd: number;
  parsed: Item | undefined;
}

const LAZY = Symbol('lazyItem');

/** The item, parsed from its bytes at first use (then the bytes are let go). */
function parsed(s: State): Item {
  if (s.parsed) return s.parsed;
  const src = s.src!;
  const raw = JSON.parse(src.toString('utf8', s.start, s.end)) as ItemRecord;
  let item: Item;
  if (s.plainStart === OLD_FORM) item = fromRecord(raw);
  else {
    item = raw;
    if (s.plainStart >= 0) keepPlainText(item, JSON.parse(src.toString('utf8', s.plainStart, s.plainEnd)) as string);
    else if (s.plainStart === PLAIN_IS_BODY) keepPlainText(item, item.body);
  }
  s.parsed = item;
  s.src = undefined;
  return item;
}

/** The listing keys of a state with a catalogue's (decoded once), else undefined. */
function keysOf(s: State): Keys | undefined {
  if (s.keys || !s.listing) return s.keys;
  const { dates, dateAt, tagNames, tagAt, tagIds } = s.listing;
  const [date, created_at, updated_at] = dates.toString('utf8', dateAt[s.entry], dateAt[s.entry + 1]).split('\n');
  const tags: string[] = [];
  for (let k = tagAt[s.entry]; k < tagAt[s.entry + 1]; k++) tags.push(tagNames[tagIds[k]]);
  s.keys = { date: date === '' ? undefined : date, created_at, updated_at, tags };
  return s.keys;
}

/** The fields a listing sorts and filters by, which a catalogue's lazy item reads without parsing. */
const LISTING_FIELDS = new Set<PropertyKey>(['date', 'created_at', 'updated_at', 'tags']);

// Every operation but reading `id`, `type`, the fingerprint (and, with the catalogue's listing keys,
// the dates and tags) goes to the parsed item, so the proxy behaves as that item does (JSON,
// spreads, `Object.entries`, equality in tests).
const handler: ProxyHandler<State> = {
  get(s, key) {
    if (key === 'id') return s.id;
    if (key === 'type') return s.type;
    if (key === KNOWN_FINGERPRINT) return s.fingerprint;
    if (key === LAZY) return s;
    if (!s.parsed && LISTING_FIELDS.has(key)) {
      const k = keysOf(s);
      if (k) return k[key as keyof Keys];
    }
    return Reflect.get(parsed(s), key) as unknown;
  },
  has: (s, key) => Reflect.has(parsed(s), key),
  ownKeys: (s) => Reflect.ownKeys(parsed(s)),
  getOwnPropertyDescriptor: (s, key) => Reflect.getOwnPropertyDescriptor(parsed(s), key),
  defineProperty: (s, key, desc) => Reflect.defineProperty(parsed(s), key, desc),
  set: (s, key, value) => Reflect.set(parsed(s), key, value),
  deleteProperty: (s, key) => Reflect.deleteProperty(parsed(s), key),
};

/**
 * An item that is parsed from its record only when something other than its id, type or
 * fingerprint is read: a start from the store's catalogue makes one per item instead of parsing
 * every record (content-catalogue.ts). It behaves as the plain item in every way code or tests
 * can see (JSON, spread, keys, equality); `unwrapItem` gives the plain object.
 */
export function lazyItem(
  id: string,
  type: ItemType,
  fingerprint: number,
  src: Buffer,
  start: number,
  end: number,
  plainStart: number,
  plainEnd: number,
  listing?: ListingKeys,
  entry = -1,
): Item {
  const state: State = {
    id,
    type,
    fingerprint,
    listing,
    entry,
    keys: undefined,
    src,
    start,
    end,
    plainStart,
    plainEnd,
    parsed: undefined,
  };
  return new Proxy(state, handler) as unknown as Item;
}

/** Whether a lazy item has been parsed (tests, benchmarks); undefined for any other item. */
export function wasParsed(item: Item): boolean | undefined {
  const s = (item as Item & { [LAZY]?: State })[LAZY];
  return s && s.parsed !== undefined;
}

/**
 * Where a catalogue's lazy item stands in the listing of every item the catalogue held (by type,
 * then newest first): its rank, and the catalogue's keys it is a rank of (only ranks of one
 * catalogue compare). Undefined for any other item.
 */
export function catalogueRank(item: Item): { readonly of: ListingKeys; readonly rank: number } | undefined {
  const s = (item as Item & { [LAZY]?: State })[LAZY];
  return s?.listing ? { of: s.listing, rank: s.listing.rank[s.entry] } : undefined;
}

/**
 * A catalogue's lazy item as its entry in the catalogue's listing keys (its tags are
 * `of.tagNames[of.tagIds[k]]` for `k` in `[of.tagAt[entry], of.tagAt[entry + 1])`); undefined
 * for any other item. For building tag lists without decoding each item's keys.
 */
export function catalogueEntry(item: Item): { readonly of: ListingKeys; readonly entry: number } | undefined {
  const s = (item as Item & { [LAZY]?: State })[LAZY];
  return s?.listing ? { of: s.listing, entry: s.entry } : undefined;
}

/**
 * The fields a listing reads of `item` (dates, tags), without keeping a lazy item parsed: from
 * the catalogue's keys, or parsed from the record and let go (a catalogue written after a start
 * from one of the older shape reads them so).
 */
export function listingFields(item: Item): Pick<Item, 'date' | 'created_at' | 'updated_at' | 'tags'> {
  const s = (item as Item & { [LAZY]?: State })[LAZY];
  if (!s) return item;
  if (s.parsed) return s.parsed;
  const k = keysOf(s);
  if (k) return k;
  // Both record forms hold the item's fields at the top level.
  return JSON.parse(s.src!.toString('utf8', s.start, s.end)) as Item;
}

/** The plain item behind a lazy one (parsed now if not yet), or `item` itself. */
export function unwrapItem(item: Item): Item {
  const s = (item as Item & { [LAZY]?: State })[LAZY];
  return s ? parsed(s) : item;
}
