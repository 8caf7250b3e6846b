/**
 * `items` sorted by `compare` (total: no two items compare equal), a bottom-up merge sort that
 * calls `due` after each comparison and awaits what it returns (a step's end: `stepper`). For
 * sorts too long for one turn of the event loop: a listing's merge after a reload that changed
 * many items compares packed items by their listing keys, ~0.2 µs a comparison (bench/content/resync.ts).
 */
export async function sortInSteps<T>(
  items: readonly T[],
  compare: (a: T, b: T) => number,
  due: () => Promise<void> | undefined,
): Promise<T[]> {
  const n = items.length;
  let from = items.slice();
  let to = new Array<T>(n);
  let s: Promise<void> | undefined;
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        to[k++] = compare(from[j], from[i]) < 0 ? from[j++] : from[i++];
        if ((s = due())) await s;
      }
      while (i < mid) to[k++] = from[i++];
      while (j < hi) to[k++] = from[j++];
    }
    [from, to] = [to, from];
  }
  return from;
}
