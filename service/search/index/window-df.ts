import type { WindowCounts } from './cursor';

/**
 * The window document frequencies of query pairs over a base segment (`CompactIndex.windowDf`):
 * per pair and window, the base documents holding an unordered window of the pair and which of
 * them hold an ordered one, exact, found once per base (a merge makes a new one) and kept while
 * the index serves it. Deleted documents are left out when counted, appended ones are counted
 * apart (few: the appended segment is merged once it holds an eighth of the documents).
 */
export interface BaseWindows {
  /** Base documents with a window (an ordered one is also an unordered one once the span is 2 or more), increasing. */
  readonly docs: Int32Array;
  /** Per document of `docs`, 1 when it also holds an ordered one. */
  readonly ordered: Uint8Array;
  /** How many of `ordered` are 1. */
  readonly o: number;
}

// Exact, never sampled: an even sample of the documents holding both terms (16,384 of them, tried
// in issue 28's sixth slice) saved no CPU at 1M (2.3 s against 2.1 s for the bench's 575 pairs:
// the cost is the galloping intersection, not the positions read), and which documents a sample
// takes depends on how a replica's segments were merged, so two replicas could score a page
// differently. Exact counts of live documents are the same on every replica holding the same items.

/** The live window frequencies of `w` (deleted documents, `gone`, left out). */
export function liveWindows(w: BaseWindows, gone: ((doc: number) => boolean) | undefined): WindowCounts {
  let o = w.o;
  let u = w.docs.length;
  if (gone) {
    o = u = 0;
    for (let i = 0; i < w.docs.length; i++) {
      if (gone(w.docs[i])) continue;
      u += 1;
      o += w.ordered[i];
    }
  }
  return { o, u };
}

/** Base documents of the pairs' windows kept, at most, summed over pairs; least recently used go first. */
export const WINDOW_DF_CACHE_DOCS = 4_000_000;

/** Intersected documents per step of `baseWindows` (between which a query may yield). */
const STEP_DOCS = 1024;

/** The cache of `BaseWindows` of one base segment. */
export class WindowDfCache {
  private of: unknown;
  private readonly entries = new Map<string, BaseWindows>();
  private size = 0;

  /** The entry of a pair in `base`, if kept (the cache is emptied when `base` changes). */
  get(base: unknown, a: number, b: number, window: number): BaseWindows | undefined {
    if (this.of !== base) {
      this.entries.clear();
      this.of = base;
      this.size = 0;
    }
    const key = `${a},${b},${window}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(base: unknown, a: number, b: number, window: number, entry: BaseWindows): void {
    if (this.of !== base) return;
    const key = `${a},${b},${window}`;
    this.entries.set(key, entry);
    this.size += entry.docs.length + 1;
    for (const [old, e] of this.entries) {
      if (this.size <= WINDOW_DF_CACHE_DOCS || old === key) break;
      this.entries.delete(old);
      this.size -= e.docs.length + 1;
    }
  }
}

/** The first index in `docs[lo .. hi)` (increasing) whose value is ≥ `target`, by galloping from `lo`. */
export function gallop(docs: Int32Array, lo: number, hi: number, target: number): number {
  let step = 1;
  let at = lo;
  while (at < hi && docs[at] < target) {
    lo = at + 1;
    at += step;
    step <<= 1;
  }
  let top = Math.min(at, hi);
  while (lo < top) {
    const mid = (lo + top) >>> 1;
    if (docs[mid] < target) lo = mid + 1;
    else top = mid;
  }
  return lo;
}

/**
 * The base documents in both runs `docs[aLo .. aHi)` and `docs[bLo .. bHi)` (each increasing)
 * that hold a window (`count`): the shorter run walked, the longer galloped over, so the work
 * is about the shorter run's length × log of the gaps, then the positions of the documents in
 * both. A step per `STEP_DOCS` documents.
 */
export function* baseWindows(
  docs: Int32Array,
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
  count: (doc: number, out: WindowCounts) => WindowCounts,
): Generator<void, BaseWindows> {
  if (aHi - aLo > bHi - bLo) [aLo, aHi, bLo, bHi] = [bLo, bHi, aLo, aHi];
  const both = new Int32Array(aHi - aLo);
  let n = 0;
  let j = bLo;
  for (let i = aLo; i < aHi && j < bHi; i++) {
    const d = docs[i];
    j = gallop(docs, j, bHi, d);
    if (j < bHi && docs[j] === d) both[n++] = d;
    if ((i - aLo) % (STEP_DOCS * 16) === STEP_DOCS * 16 - 1) yield;
  }
  return yield* windowsOf(both, n, count);
}

/** The documents `both[0 .. n)` (increasing) that hold a window, a step per `STEP_DOCS` documents. */
export function* windowsOf(
  both: Int32Array,
  n: number,
  count: (doc: number, out: WindowCounts) => WindowCounts,
): Generator<void, BaseWindows> {
  const found: number[] = [];
  const flags: number[] = [];
  let o = 0;
  const w: WindowCounts = { o: 0, u: 0 };
  for (let k = 0; k < n; k++) {
    const d = both[k];
    count(d, w);
    if (w.u > 0 || w.o > 0) {
      found.push(d);
      flags.push(w.o > 0 ? 1 : 0);
      if (w.o > 0) o++;
    }
    if (k % STEP_DOCS === STEP_DOCS - 1) yield;
  }
  return { docs: Int32Array.from(found), ordered: Uint8Array.from(flags), o };
}
