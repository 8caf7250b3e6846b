/**
 * `0 … n − 1` sorted by `compare`, a bottom-up merge sort that awaits `pause` every few thousand
 * comparisons, so that sorting a million entries in the background (a catalogue being written)
 * never holds the event loop for the whole sort. Stable.
 */
export async function pausedSort(
  n: number,
  compare: (a: number, b: number) => number,
  pause: () => Promise<void>,
): Promise<Uint32Array> {
  let from = new Uint32Array(n);
  let to = new Uint32Array(n);
  for (let i = 0; i < n; i++) from[i] = i;
  let steps = 0;
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        to[k++] = compare(from[j], from[i]) < 0 ? from[j++] : from[i++];
        if ((++steps & 8191) === 0) await pause();
      }
      while (i < mid) to[k++] = from[i++];
      while (j < hi) to[k++] = from[j++];
    }
    [from, to] = [to, from];
  }
  return from;
}
