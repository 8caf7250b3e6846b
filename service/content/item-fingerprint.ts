import type { Item } from './item';

/**
 * The fingerprint of an item already known to its store (a catalogue entry: lazy-item.ts), read
 * instead of computed so that it does not make the store parse the item.
 */
export const KNOWN_FINGERPRINT: unique symbol = Symbol('knownFingerprint');

function mix(n: number, h: number): number {
  return Math.imul(h ^ (n >>> 0), 0x01000193);
}

/** FNV-1a over the UTF-16 code units of `s`, continuing from `h` (no encoding, no native call). */
function hashString(s: string, h: number): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return Math.imul(h ^ s.length, 0x01000193);
}

/**
 * A 32-bit version stamp of what the index holds of an item, kept with each document of a
 * persisted segment so that a replica starting from it re-indexes exactly the items that changed
 * since it was written. It covers the id and `updated_at` (FNV-1a; every write that changes an
 * item stamps it anew: `stamp` in content/item.ts), the type, and the length of every indexed
 * field, not the text itself: hashing every body would cost a third of a second per 200,000
 * items at each start. An item rewritten within the same millisecond with every field the same
 * length is the one change it cannot see (see docs/search-segments.md).
 */
export function itemFingerprint(item: Item): number {
  const known = (item as Item & { [KNOWN_FINGERPRINT]?: number })[KNOWN_FINGERPRINT];
  if (known !== undefined) return known;
  let h = hashString(item.updated_at, hashString(item.id, 0x811c9dc5));
  h = mix(item.type.charCodeAt(0), h);
  h = mix(item.title.length, h);
  h = mix(item.body.length, h);
  h = mix(item.summary === undefined ? 0xffffffff : item.summary.length, h);
  h = mix(item.tags.length, h);
  for (const t of item.tags) h = mix(t.length, h);
  return h >>> 0;
}
