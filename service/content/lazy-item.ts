import { KNOWN_FINGERPRINT, itemFingerprint } from './item-fingerprint';
import type { Item, ItemType } from './item';
import { fromRecord, type ItemRecord } from './item-record';
import { PLAIN_TEXT_KEY, keepPlainText } from './plain-text';

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

/** The fields of an item's listing keys. */
type Keys = Pick<Item, 'date' | 'created_at' | 'updated_at' | 'tags'>;

/**
 * What a packed item knows without parsing (its id, type, fingerprint and listing keys: its own,
 * or entry `entry` of a catalogue's `listing`) and where its record is: the bytes `src`, its JSON
 * object `src[start, end)`, its plain text's JSON string `src[plainStart, plainEnd)` or
 * `PLAIN_IS_BODY`, `PLAIN_ABSENT` (then `plain` once computed), `OLD_FORM`.
 *
 * Every field is a small integer or a reference to a string or a shared object, so that the state
 * is one heap object: the fingerprint is two 16-bit halves (a uint32 field would be a heap number
 * of its own) and the listing keys one string (`keyString`), split per read.
 */
interface State {
  readonly id: string;
  readonly type: ItemType;
  readonly fingerprintHigh: number;
  readonly fingerprintLow: number;
  readonly listing: ListingKeys | undefined;
  readonly entry: number;
  /**
   * The listing keys as `keyString` gives them; undefined while a catalogue's are not decoded
   * yet, or when they cannot be put so (a key holding a newline: read from a parse then).
   */
  keys: string | undefined;
  readonly src: Buffer;
  readonly start: number;
  readonly end: number;
  readonly plainStart: number;
  readonly plainEnd: number;
  /** The item parsed, while it is among the `PARSES_KEPT` most recent parses. */
  parsed: Item | undefined;
  /** The plain text computed after packing (a record without one of this version: `PLAIN_ABSENT`). */
  plain: string | undefined;
  /**
   * Whether the record holds a `vector`: `VECTOR_UNKNOWN` until asked (a catalogue entry's),
   * `VECTOR_ABSENT` or `VECTOR_MAYBE`. Most items have none, and code that asks only that of every
   * changed item (the vector feed, for a write of 10,000) would otherwise parse each (issue 40).
   */
  vector: number;
}

const VECTOR_UNKNOWN = 0;
const VECTOR_ABSENT = 1;
const VECTOR_MAYBE = 2;
/** What a record's JSON holds before a top-level `vector`'s value (JSON.stringify's output: no spaces). */
const VECTOR_KEY = Buffer.from('"vector":');

/** Whether a state's record has no `vector` (read from its bytes once, without a parse). */
function vectorAbsent(s: State): boolean {
  if (s.vector === VECTOR_UNKNOWN)
    s.vector = s.src.subarray(s.start, s.end).indexOf(VECTOR_KEY) < 0 ? VECTOR_ABSENT : VECTOR_MAYBE;
  return s.vector === VECTOR_ABSENT;
}

const PACKED = Symbol('packedItem');

/**
 * How many parses of packed items are kept, the most recent ones (a ring): a request reading a
 * page's fields, or an index build reading an item's fields one after another, parses each item
 * once, and after a build no item stays parsed. A parsed item of the filters bench was 8.9 heap
 * objects for every full collection to mark (issue 40); packed, it is 4.0 (proxy, state, id, keys
 * string: bench/search/item-objects.ts).
 */
export const PARSES_KEPT = 4096;
const kept: Array<State | undefined> = new Array<State | undefined>(PARSES_KEPT).fill(undefined);
let nextKept = 0;

/**
 * The item of a state's record, parsed now. Its plain text is not kept on it (`plainOf` answers
 * it): a property defined on each parse took more of a parse's time than `JSON.parse` did.
 */
function parse(s: State): Item {
  const raw = JSON.parse(s.src.toString('utf8', s.start, s.end)) as ItemRecord;
  return s.plainStart === OLD_FORM ? fromRecord(raw) : raw;
}

/** A state's plain text (`item`: its parse, if at hand), or undefined when not computed yet. */
function plainOf(s: State, item?: Item): string | undefined {
  if (s.plain !== undefined) return s.plain;
  if (s.plainStart >= 0) return JSON.parse(s.src.toString('utf8', s.plainStart, s.plainEnd)) as string;
  if (s.plainStart === PLAIN_IS_BODY) return (item ?? parsed(s)).body;
  // The older record form: kept on the parse by `fromRecord` when of this version.
  if (s.plainStart === OLD_FORM) return ((item ?? parsed(s)) as Item & { [PLAIN_TEXT_KEY]?: string })[PLAIN_TEXT_KEY];
  return undefined;
}

/** The item, from the kept parses or parsed now and kept in place of the oldest. */
function parsed(s: State): Item {
  if (s.parsed) return s.parsed;
  const item = parse(s);
  const oldest = kept[nextKept];
  if (oldest) oldest.parsed = undefined;
  kept[nextKept] = s;
  nextKept = (nextKept + 1) % PARSES_KEPT;
  s.parsed = item;
  return item;
}

/**
 * Listing keys as one string, `date` (empty when it has none), `created_at`, `updated_at` and the
 * tags, `\n`-separated; undefined when they cannot be read back from it (a key holding a newline,
 * an empty date, one not a string).
 */
function keyString(date: unknown, created: unknown, updated: unknown, tags: unknown): string | undefined {
  const dates = [date ?? '', created, updated];
  if (date === '' || !Array.isArray(tags) || ![...dates, ...tags].every((k) => typeof k === 'string')) return undefined;
  const k = [...dates, ...(tags as string[])].join('\n');
  return k.split('\n').length === 3 + tags.length ? k : undefined;
}

/** The listing keys of a state: its own, or its catalogue's (decoded once); else undefined. */
function keysOf(s: State): string | undefined {
  if (s.keys !== undefined || !s.listing) return s.keys;
  const { dates, dateAt, tagNames, tagAt, tagIds } = s.listing;
  const tags: string[] = [];
  for (let k = tagAt[s.entry]; k < tagAt[s.entry + 1]; k++) tags.push(tagNames[tagIds[k]]);
  // A tag holding a newline cannot be put so: every read of that item's keys parses it.
  if (tags.some((t) => t.includes('\n'))) return undefined;
  s.keys = [dates.toString('utf8', dateAt[s.entry], dateAt[s.entry + 1]), ...tags].join('\n');
  return s.keys;
}

/** Field `key` of the listing keys `k` (`keyString`). */
function keyOf(k: string, key: keyof Keys): Keys[keyof Keys] {
  const a = k.indexOf('\n');
  if (key === 'date') return a === 0 ? undefined : k.slice(0, a);
  const b = k.indexOf('\n', a + 1);
  if (key === 'created_at') return k.slice(a + 1, b);
  const c = k.indexOf('\n', b + 1);
  if (key === 'updated_at') return k.slice(b + 1, c < 0 ? k.length : c);
  return c < 0 ? [] : k.slice(c + 1).split('\n');
}

/** The fields a listing sorts and filters by, which a packed item reads without parsing. */
const LISTING_FIELDS = new Set<PropertyKey>(['date', 'created_at', 'updated_at', 'tags']);

/** The error of a change to a packed item: its parse is not kept, so the change would be lost. */
function immutable(s: State, what: string, key: PropertyKey): never {
  throw new TypeError(
    `item "${s.id}" is packed (held as its record's bytes, parsed per use) and cannot be changed (${what} ${String(key)}): make a new item, e.g. { ...item, ${String(key)}: … }`,
  );
}

// Every operation but reading `id`, `type`, the fingerprint and the listing keys goes to the
// parsed item, so the proxy behaves as that item does (JSON, spreads, `Object.entries`, equality
// in tests). Changes are refused: the parse they would go to is dropped from the ring later.
// Only a plain text defined on it is taken (plainTextOf, for a record without one of this
// version), into the state: derived from the body, not a change of the item.
const handler: ProxyHandler<State> = {
  get(s, key) {
    if (key === 'id') return s.id;
    if (key === 'type') return s.type;
    if (key === KNOWN_FINGERPRINT) return ((s.fingerprintHigh << 16) | s.fingerprintLow) >>> 0;
    if (key === PACKED) return s;
    if (LISTING_FIELDS.has(key)) {
      const k = keysOf(s);
      if (k !== undefined) return keyOf(k, key as keyof Keys);
    }
    if (key === PLAIN_TEXT_KEY) return plainOf(s);
    if (key === 'vector' && !s.parsed && vectorAbsent(s)) return undefined;
    return Reflect.get(parsed(s), key) as unknown;
  },
  has: (s, key) => Reflect.has(parsed(s), key),
  ownKeys: (s) => Reflect.ownKeys(parsed(s)),
  getOwnPropertyDescriptor: (s, key) => Reflect.getOwnPropertyDescriptor(parsed(s), key),
  defineProperty(s, key, desc) {
    if (key !== PLAIN_TEXT_KEY || typeof desc.value !== 'string') immutable(s, 'define', key);
    s.plain = desc.value as string;
    return true;
  },
  set: (s, key) => immutable(s, 'set', key),
  deleteProperty: (s, key) => immutable(s, 'delete', key),
  setPrototypeOf: (s) => immutable(s, 'set the prototype of', 'item'),
  preventExtensions: (s) => immutable(s, 'freeze', 'item'),
};

/** A packed item over `state`. */
const packed = (state: State): Item => new Proxy(state, handler) as unknown as Item;

/** The state of a packed item, or undefined for any other item. */
const stateOf = (item: Item): State | undefined => (item as Item & { [PACKED]?: State })[PACKED];

/**
 * A catalogue entry's item, parsed from its record only when something other than its id, type,
 * fingerprint or listing keys is read: a start from the store's catalogue makes one per item
 * instead of parsing every record (content-catalogue.ts). A packed item (`packItem`).
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
  return packed({
    id,
    type,
    fingerprintHigh: fingerprint >>> 16,
    fingerprintLow: fingerprint & 0xffff,
    listing,
    entry,
    keys: undefined,
    src,
    start,
    end,
    plainStart,
    plainEnd,
    parsed: undefined,
    plain: undefined,
    vector: VECTOR_UNKNOWN,
  });
}

/**
 * Bytes of the slabs packed items are written into, one after another: no Buffer object per item
 * (a record over a quarter of this gets a Buffer of its own). A slab stays while any item in it is
 * held, so the bytes of items replaced since stay with it: at most a slab per item held, as Node's
 * own pool keeps 8 KB per small Buffer.
 */
const SLAB_BYTES = 64 * 1024;
let slab = Buffer.allocUnsafeSlow(0);
let slabUsed = 0;

/** `text` written into bytes a packed item keeps: its Buffer and where it starts. */
function written(text: string): { readonly src: Buffer; readonly at: number } {
  const bytes = Buffer.byteLength(text);
  if (bytes > SLAB_BYTES / 4) return { src: Buffer.from(text), at: 0 };
  if (slabUsed + bytes > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  const at = slabUsed;
  slabUsed += slab.write(text, at);
  return { src: slab, at };
}

/**
 * `item` packed, as the in-memory copy, the stores and the search index hold items: its record's
 * bytes (its JSON, then its kept plain text's JSON string unless that is the body; one not kept
 * yet is computed at first use, as for a record without one) in a Buffer (external memory, which a
 * collection does not mark; small ones share Node's pool slabs), with its id, type, fingerprint
 * and listing keys beside them. Every other field is read from a parse of the bytes, of which the
 * most recent `PARSES_KEPT` are kept. It behaves as the plain item in every way code or tests can
 * see (JSON, spread, keys, equality) but refuses changes (a clear error); `unwrapItem` gives a
 * plain copy. A packed item is returned as it is.
 */
export function packItem(item: Item): Item {
  if (stateOf(item)) return item;
  const text = (item as Item & { [PLAIN_TEXT_KEY]?: string })[PLAIN_TEXT_KEY];
  const json = JSON.stringify(item);
  const own = text !== undefined && text !== item.body;
  const plainJson = own ? JSON.stringify(text) : '';
  const { src, at } = written(json + plainJson);
  const end = at + Buffer.byteLength(json);
  const fingerprint = itemFingerprint(item);
  return packed({
    id: item.id,
    type: item.type,
    fingerprintHigh: fingerprint >>> 16,
    fingerprintLow: fingerprint & 0xffff,
    listing: undefined,
    entry: -1,
    keys: keyString(item.date, item.created_at, item.updated_at, item.tags),
    src,
    start: at,
    end,
    plainStart: own ? end : text === undefined ? PLAIN_ABSENT : PLAIN_IS_BODY,
    plainEnd: end + (own ? Buffer.byteLength(plainJson) : 0),
    parsed: undefined,
    plain: undefined,
    vector: item.vector === undefined ? VECTOR_ABSENT : VECTOR_MAYBE,
  });
}

/**
 * Whether two packed items hold the same record: the same fingerprint, then the same bytes (the
 * record's JSON, and its kept plain text's when it has one of its own). A reload finds most items
 * so (a store that comes back with what it had): the in-memory copy keeps the item it holds, and
 * its listings with it (content-service.ts `resync`). False for an item that is not packed, and
 * for the same item held in another form (older record form, plain text kept otherwise): a
 * reload then takes the store's, as for any change.
 */
export function sameRecord(a: Item, b: Item): boolean {
  const s = stateOf(a);
  const t = stateOf(b);
  if (!s || !t) return false;
  if (s.fingerprintHigh !== t.fingerprintHigh || s.fingerprintLow !== t.fingerprintLow) return false;
  const own = s.plainStart >= 0;
  if (own ? t.plainStart < 0 : s.plainStart !== t.plainStart) return false;
  if (s.end - s.start !== t.end - t.start || s.src.compare(t.src, t.start, t.end, s.start, s.end) !== 0) return false;
  return (
    !own ||
    (s.plainEnd - s.plainStart === t.plainEnd - t.plainStart &&
      s.src.compare(t.src, t.plainStart, t.plainEnd, s.plainStart, s.plainEnd) === 0)
  );
}

/** Whether a packed item's parse is kept now (tests, benchmarks); undefined for any other item. */
export function wasParsed(item: Item): boolean | undefined {
  const s = stateOf(item);
  return s && s.parsed !== undefined;
}

/**
 * Where a catalogue's lazy item stands in the listing of every item the catalogue held (by type,
 * then newest first): its rank, and the catalogue's keys it is a rank of (only ranks of one
 * catalogue compare). Undefined for any other item.
 */
export function catalogueRank(item: Item): { readonly of: ListingKeys; readonly rank: number } | undefined {
  const s = stateOf(item);
  return s?.listing ? { of: s.listing, rank: s.listing.rank[s.entry] } : undefined;
}

/**
 * A catalogue's lazy item as its entry in the catalogue's listing keys (its tags are
 * `of.tagNames[of.tagIds[k]]` for `k` in `[of.tagAt[entry], of.tagAt[entry + 1])`); undefined
 * for any other item. For building tag lists without decoding each item's keys.
 */
export function catalogueEntry(item: Item): { readonly of: ListingKeys; readonly entry: number } | undefined {
  const s = stateOf(item);
  return s?.listing ? { of: s.listing, entry: s.entry } : undefined;
}

/**
 * The fields a listing reads of `item` (dates, tags), without parsing a packed item: from its
 * keys, or parsed from the record and not kept (a catalogue written after a start from one of
 * the older shape reads them so).
 */
export function listingFields(item: Item): Pick<Item, 'date' | 'created_at' | 'updated_at' | 'tags'> {
  const s = stateOf(item);
  if (!s) return item;
  const k = keysOf(s);
  if (k !== undefined)
    return {
      date: keyOf(k, 'date') as string | undefined,
      created_at: keyOf(k, 'created_at') as string,
      updated_at: keyOf(k, 'updated_at') as string,
      tags: keyOf(k, 'tags') as string[],
    };
  // Both record forms hold the item's fields at the top level.
  return s.parsed ?? (JSON.parse(s.src.toString('utf8', s.start, s.end)) as Item);
}

/**
 * A plain copy of a packed item (parsed now, its own object: changing it changes nothing held),
 * or `item` itself.
 */
export function unwrapItem(item: Item): Item {
  const s = stateOf(item);
  if (!s) return item;
  const plain = parse(s);
  const text = plainOf(s, plain);
  if (text !== undefined) keepPlainText(plain, text);
  return plain;
}
