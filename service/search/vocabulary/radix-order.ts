/**
 * The order in which MiniSearch's radix tree (`SearchableMap`, filled with the terms in order of
 * their ids) yields the terms under a prefix (`atPrefix(prefix)` iterated), computed from the
 * terms in sorted order, without the tree. When a prefix has more terms than a look-up may scan,
 * the terms scanned are the tree's first ones, so this order decides which they are.
 *
 * The tree yields depth first, and at each node its entries (the term ending there, and one edge
 * per next unit) in the reverse of the order they were last set in the node's `Map`. An edge is
 * set when made and set again (deleted and re-added) when a later term splits it; a node is made
 * when the first term ends at it or when its terms first differ there, and the edge a split
 * moves into a new node is set first, the new term's entry second. So, per node at depth `d`
 * with the terms (sorted positions) `[lo, hi)`:
 *
 * - the node was made at `made` = the smaller of the id of the term ending there and the second
 *   smallest of its edges' smallest ids (the first moment two edges existed);
 * - an edge's last setting is at the larger of `made` and the making of the node it leads to (the
 *   moment its own terms' common prefix last shrank to that node; its only term's id when it
 *   leads to one term);
 * - the term ending at the node was set at its id;
 * - entries are yielded latest setting first; at a tie (the node's making) the newer one first.
 */
export function radixOrder(
  terms: readonly string[],
  idAt: (i: number) => number,
  lo: number,
  hi: number,
  prefix: string,
  visit: (id: number) => boolean,
): void {
  if (lo >= hi) return;
  if (prefix.length === 0) {
    node(terms, idAt, entriesOf(terms, idAt, lo, hi, 0), 0, -1, visit);
    return;
  }
  // The prefix leads to the node of the range's common prefix (it may end inside the edge to it).
  const d = commonLength(terms[idAt(lo)], terms[idAt(hi - 1)]);
  const top = entriesOf(terms, idAt, lo, hi, d);
  node(terms, idAt, top, d, top.made, visit);
}

/** What a node's entries tell about it: each entry's range and smallest id, and when the node was made. */
interface Entries {
  /** Per entry `[from, to, smallest id]`; an entry of one term ending at the node is first if any. */
  readonly list: Array<[number, number, number]>;
  /** Whether the first entry is the term ending at the node. */
  readonly leaf: boolean;
  readonly made: number;
}

function entriesOf(terms: readonly string[], idAt: (i: number) => number, lo: number, hi: number, d: number): Entries {
  const list: Array<[number, number, number]> = [];
  let i = lo;
  const leaf = terms[idAt(lo)].length === d;
  if (leaf) list.push([lo, ++i, idAt(lo)]);
  while (i < hi) {
    const c = terms[idAt(i)].charCodeAt(d);
    let min = idAt(i);
    let j = i + 1;
    for (; j < hi && terms[idAt(j)].charCodeAt(d) === c; j++) min = Math.min(min, idAt(j));
    list.push([i, j, min]);
    i = j;
  }
  let edgeFirst = Infinity;
  let edgeSecond = Infinity;
  for (const [k, [, , min]] of list.entries()) {
    if (leaf && k === 0) continue;
    if (min < edgeFirst) [edgeFirst, edgeSecond] = [min, edgeFirst];
    else if (min < edgeSecond) edgeSecond = min;
  }
  return { list, leaf, made: Math.min(leaf ? list[0][2] : Infinity, edgeSecond) };
}

/** Visits the node at depth `d` with `entries`, made at `made`; true once `visit` asked to stop. */
function node(
  terms: readonly string[],
  idAt: (i: number) => number,
  entries: Entries,
  d: number,
  made: number,
  visit: (id: number) => boolean,
): boolean {
  const { list, leaf } = entries;
  // Per entry: [last setting, smallest id, the entries of its node (none for a term ending here), its depth].
  const order: Array<[number, number, Entries | undefined, number]> = [];
  for (const [k, [from, to, min]] of list.entries()) {
    if (leaf && k === 0) {
      order.push([min, min, undefined, d]);
      continue;
    }
    const depth = to - from === 1 ? terms[idAt(from)].length : commonLength(terms[idAt(from)], terms[idAt(to - 1)]);
    const child = entriesOf(terms, idAt, from, to, depth);
    order.push([Math.max(made, child.made), min, child, depth]);
  }
  order.sort((a, b) => b[0] - a[0] || b[1] - a[1]);
  for (const [, min, child, depth] of order) {
    if (child ? node(terms, idAt, child, depth, child.made, visit) : visit(min)) return true;
  }
  return false;
}

/** Length of the common prefix of `a` and `b`. */
function commonLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
