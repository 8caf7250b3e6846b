import type { DocKeep } from './index/postings-index';

/**
 * Words of 32 documents whose liveness a step of `tallyLive` reads: 8,192, 262,144 documents (a
 * block of the facet groups' counts, `GROUP_BLOCK_DOCS`).
 */
export const LIVE_TALLY_WORDS = 8_192;

/**
 * Every live document below `n` counted through `words` (a facet tally's `DocKeep.words`), as a
 * search's union is counted: the live documents as a bitmap, `LIVE_TALLY_WORDS` words a step
 * (`live` asked document by document unless `allLive`: no document deleted since the last merge).
 * Returns the number `words` answers (those passing the filter).
 */
export function* tallyLive(
  n: number,
  live: (doc: number) => boolean,
  allLive: boolean,
  words: NonNullable<DocKeep['words']>,
): Generator<void, number> {
  let total = 0;
  const live32 = new Int32Array((n + 31) >>> 5);
  for (let w = 0; w << 5 < n; w++) {
    let x = 0;
    if (allLive) x = n - (w << 5) >= 32 ? -1 : (1 << (n - (w << 5))) - 1;
    else for (let d = w << 5, e = Math.min(n, d + 32); d < e; d++) if (live(d)) x |= 1 << (d & 31);
    live32[w] = x;
    if ((w & (LIVE_TALLY_WORDS - 1)) === LIVE_TALLY_WORDS - 1 || (w + 1) << 5 >= n) {
      total += words(live32, w & ~(LIVE_TALLY_WORDS - 1), w + 1);
      yield;
    }
  }
  return total;
}
