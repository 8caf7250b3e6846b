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
 * What a lazy item knows without parsing (its id, type, fingerprint) and where its record is: the
 * content file's bytes `src`, its JSON object `src[start, end)`, its plain text's JSON string
 * `src[plainStart, plainEnd)` or `PLAIN_IS_BODY`, `PLAIN_ABSENT`, `OLD_FORM`.
 */
interface State {
  readonly id: string;
  readonly type: ItemType;
  readonly fingerprint: number;
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

// Every operation but reading `id`, `type` and the fingerprint goes to the parsed item, so the
// proxy behaves as that item does (JSON, spreads, `Object.entries`, equality in tests).
const handler: ProxyHandler<State> = {
  get(s, key) {
    if (key === 'id') return s.id;
    if (key === 'type') return s.type;
    if (key === KNOWN_FINGERPRINT) return s.fingerprint;
    if (key === LAZY) return s;
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
export function lazyItem(id: string, type: ItemType, fingerprint: number, src: Buffer, start: number, end: number, plainStart: number, plainEnd: number): Item {
  const state: State = { id, type, fingerprint, src, start, end, plainStart, plainEnd, parsed: undefined };
  return new Proxy(state, handler) as unknown as Item;
}

/** The plain item behind a lazy one (parsed now if not yet), or `item` itself. */
export function unwrapItem(item: Item): Item {
  const s = (item as Item & { [LAZY]?: State })[LAZY];
  return s ? parsed(s) : item;
}
