import type { DocKeep } from './index/postings-index';

/**
 * Words of 32 documents a step of `tallyLive` reads the liveness of, or counts one by one:
 * 2,048, 65,536 documents (a step of 8,192 words, asking each document's id, took 90.8 ms of the
 * loop thread's CPU at 1M in a run at load ~2, BENCHMARKS.md abuf).
 */
export const LIVE_STEP_WORDS = 2_048;

/** The live documents as a bitmap (`SegmentedIndex.liveWords`): sets `out[lo … hi - 1]`, returns how many are live. */
export type LiveWords = (out: Int32Array, lo: number, hi: number) => number;

/** `tallyLive`'s options. */
export interface TallyLiveOptions {
  /** Where `words` counts a block from the block's counts (`FacetTally.blockWork`). @default none */
  readonly block?: { readonly words: number; readonly groups: number };
  /** Words a step (small in tests). @default LIVE_STEP_WORDS */
  readonly stepWords?: number;
}

/**
 * Every live document below `n` counted through `words` (a facet tally's `DocKeep.words`), as a
 * search's union is counted; returns the number `words` answers (those passing the filter). The
 * live documents' bitmap is read `LIVE_STEP_WORDS` words a step; where `words` counts a block
 * from the block's counts (`opts.block`), a block the live documents fill but
 * for so few that its counts less theirs take no more than a step's documents is counted whole,
 * in one step; else `stepWords` words a step.
 */
export function* tallyLive(
  n: number,
  liveWords: LiveWords,
  words: NonNullable<DocKeep['words']>,
  opts: TallyLiveOptions = {},
): Generator<void, number> {
  const { block, stepWords: step = LIVE_STEP_WORDS } = opts;
  const bits = new Int32Array((n + 31) >>> 5);
  const span = block?.words ?? step;
  let total = 0;
  for (let b = 0; b < bits.length; b += span) {
    const end = Math.min(bits.length, b + span);
    let live = 0;
    for (let w = b; w < end; w += step) {
      live += liveWords(bits, w, Math.min(end, w + step));
      yield;
    }
    const lacking = Math.min(n, end << 5) - (b << 5) - live;
    if (block && lacking + block.groups <= step << 5) {
      total += words(bits, b, end);
      yield;
      continue;
    }
    for (let w = b; w < end; w += step) {
      total += words(bits, w, Math.min(end, w + step));
      yield;
    }
  }
  return total;
}
