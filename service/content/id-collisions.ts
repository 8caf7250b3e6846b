/** One item of a write, as an id collision names it. */
export interface CollidingItem {
  /** Position in the batch (or in its file, for an upload). */
  readonly index: number;
  readonly title: string;
  /** The file it came from (uploads and the ingest CLI). */
  readonly file?: string;
}

/** Items of one write that would land on the same id: each would replace the one before. */
export interface IdCollision {
  readonly id: string;
  /** Two or more, in the order they were sent. */
  readonly items: readonly CollidingItem[];
}

/**
 * The ids that more than one of `items` would be stored under, each with every item that has it,
 * in order of first appearance. Titles are slugged into ids (`"C++ tips"`, `"C# tips"` and `"C
 * tips"` are all `c-tips`), so distinct titles can collide; stored together, every item but the
 * last would vanish while each was reported stored. One pass, one map: linear in the items.
 */
export function idCollisions<T extends CollidingItem & { readonly id: string }>(items: readonly T[]): IdCollision[] {
  const byId = new Map<string, CollidingItem[]>();
  for (const i of items) {
    const named: CollidingItem = { index: i.index, title: i.title, ...(i.file !== undefined ? { file: i.file } : {}) };
    const group = byId.get(i.id);
    if (group) group.push(named);
    else byId.set(i.id, [named]);
  }
  return [...byId].filter(([, group]) => group.length > 1).map(([id, group]) => ({ id, items: group }));
}

/** `item 0 ("C++ tips")`, or `a.json item 0 ("C++ tips")` with a file. */
export function describeItem(i: CollidingItem): string {
  const title = i.title.length > 80 ? `${i.title.slice(0, 77)}...` : i.title;
  return `${i.file !== undefined ? `${i.file} ` : ''}item ${i.index} (${JSON.stringify(title)})`;
}

/**
 * Most items a collision names in a message or lists in an answer: a batch of 1,000 items with one
 * id must not answer each with the other 999 (a million names); the count says the rest.
 */
export const MAX_NAMED_COLLIDING = 10;

/**
 * `item 0 ("C++ tips"), item 1 ("C# tips") and item 2 ("C tips")`; past `MAX_NAMED_COLLIDING`
 * items, the first ones and `and 990 more`.
 */
export function describeItems(items: readonly CollidingItem[]): string {
  const names = items.slice(0, MAX_NAMED_COLLIDING).map(describeItem);
  const more = items.length - names.length;
  if (more > 0) return `${names.join(', ')} and ${more} more`;
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}` : (names[0] ?? '');
}
