import { BLOCK_SHIFT, scoreCursor, type ScoreCursor } from '../index/cursor';
import { tracedWindow } from './window-trace';
import { knownFloor, type TopKOptions } from './top-k';
import { byRank, type DocHit } from './top-hits';

/**
 * Postings of a window of `windowedTopK` at least, and of the first one while the scorer's pace
 * is not known yet: a query over fewer postings is scored in one step. 2^16: during an ingest at
 * 200k documents (term values rebuilt after every write) a window of `boundedTopK` takes up to
 * ~10 ms; fixed windows of 2^18 took up to 37 ms there, the longest unit of a query's slices
 * (issue 28, seventh slice: BENCHMARKS.md).
 */
export const WINDOW_POSTINGS = 1 << 16;

/**
 * Postings of a window at most, by default (`EmbeddedIndex` passes it): a pace learned on one
 * query's fast windows (late windows prune from a high floor; warm values) sized the next query's
 * window for 5 ms at a pace it did not have, up to a whole RM3 pass of ~1.3M postings at 1M
 * documents in one window, 100 ms of the loop thread's CPU at load ~22 (2026-12-04, BENCHMARKS.md
 * "The long turns of full RM3 queries at 1M"). Not 2^17: that cost full queries at 1M 1.06x the
 * CPU unfiltered and 1.12x filtered, and the slow windows of 2^18 left at 1M (23-65 ms) reran in
 * 0.0-2.1 ms: the host's stretches, not their work (2026-12-05, BENCHMARKS.md "The slow windows").
 */
export const MAX_WINDOW_POSTINGS = 1 << 18;

/**
 * Postings of a window at most, by default (`EmbeddedIndex` passes it), while it has no floor to
 * prune from (fewer than k hits found so far and none given: a pass's first windows), whose
 * pace is the last query's pruned windows': such windows were read at ~230-320 ns a posting at
 * 1M, sized up to `MAX_WINDOW_POSTINGS` (60-84 ms of the loop thread's CPU; 2^16 of them ~15-21
 * ms). Passes over cursors without values (`cold`) are not bounded by it: at 1M they cost no more
 * a posting than warm ones (7 ns at the mean, 2026-12-05, BENCHMARKS.md), and bounding them too
 * cost queries windows.
 */
export const MAX_OPEN_WINDOW_POSTINGS = 1 << 16;

/**
 * Postings of a window at least while the scorer's pace is slow or not known yet, by default
 * (`EmbeddedIndex` passes it): in the first queries after a build the scorers' loops are not
 * optimised yet, and their first windows of `WINDOW_POSTINGS` took 96-154 ms of the loop thread's
 * CPU at 1M documents (load ~10, 2026-12-04, BENCHMARKS.md); windows of 2^14 still took 48-61 ms
 * there (the expanded pass's first windows, no GC in them: ~3 µs a posting). Sized by that slow
 * pace they are a sixteenth of `WINDOW_POSTINGS`, until the pace has grown back (at most twice per
 * window). A window the OS did not run looks slow too (the pace is wall-clock), and each window
 * prunes from a floor of its own: on a busy machine warm windows are still sized far above this.
 */
export const FEWEST_WINDOW_POSTINGS = 1 << 12;

/** Scoring time a window is sized for, milliseconds, by default (`EmbeddedIndex` passes its `querySliceMs`). */
export const WINDOW_MS = 5;

/** How `windowedTopK` cuts a query's postings into windows. */
export interface WindowSizing {
  /** Postings of a window at least, and of every window when `ms` is 0. @default WINDOW_POSTINGS */
  readonly postings?: number;
  /**
   * Postings of a window at least when the pace is slower than `postings` per `ms`, and of the
   * first while no pace is known (at most `postings`). @default `postings`
   */
  readonly fewest?: number;
  /** Postings of a window at most, whatever the pace (at least `postings`). @default no bound */
  readonly most?: number;
  /**
   * Postings of a window at most while it has no floor to prune from (fewer than k hits found,
   * no `floor` given, fewer than k `known`), whatever the pace: such windows can cost several
   * times more a posting than the pruned ones a pace is mostly learned on (from `fewest` to
   * `most`). @default `most`
   */
  readonly mostOpen?: number;
  /** Scoring time a window is sized for, from the pace of the window before; 0 = every window `postings`. @default WINDOW_MS */
  readonly ms?: number;
  /** Each scorer's pace at its last window, kept across queries (an index's), apart for passes from known documents: sizes a query's first window too. */
  readonly pace?: WindowPace;
  /** The clock windows are timed with. @default performance.now */
  readonly now?: () => number;
}

/**
 * Postings a scorer got through per millisecond in its last window, per scorer and per kind of
 * pass: one that starts from known documents (`TopKOptions.known`: RM3's expanded pass, ~40
 * terms from its feedback documents' floor) keeps a pace apart from one that does not (at 200k
 * both RM3 passes use `boundedTopK`; with one pace, the first pass's faster pace let a whole
 * expanded pass run as one window, up to 23 ms during a 200k ingest, 15 ms apart). Warm queries
 * (values kept) score fast and are then scored in one window, as without windows (fixed windows
 * of 2^16 made full queries at 200k 1.37x slower at the median: each window prunes from its own
 * best, a lower floor than the whole range's); after writes queries score several times slower
 * and get windows of about `ms` each. Passes with a cursor scored without values keep a pace
 * apart too (`of`'s `cold`).
 */
export class WindowPace {
  // Per kind of pass (from known documents or not, with every value computed ahead or not), per scorer.
  private readonly kinds = [0, 1, 2, 3].map(() => new Map<TopK, number>());

  /** `cold`: a pass with a cursor without values computed ahead (`ScoreCursor.vals`: BM25 per posting). */
  of(topK: TopK, known = false, cold = false): number | undefined {
    return this.kind(known, cold).get(topK);
  }

  set(topK: TopK, postingsPerMs: number, known = false, cold = false): void {
    this.kind(known, cold).set(topK, postingsPerMs);
  }

  private kind(known: boolean, cold: boolean): Map<TopK, number> {
    return this.kinds[(known ? 1 : 0) + (cold ? 2 : 0)];
  }
}

/**
 * The pace to size the next window by after one scored at `observed` postings per ms: a slower
 * pace at once, a faster one at most twice the last (one query's pass can be several times faster
 * than the next one's: the RM3 pass starts from its feedback documents' floor).
 */
export function nextPace(last: number | undefined, observed: number): number {
  return last === undefined ? observed : Math.min(observed, last * 2);
}

/** A top-k scorer over cursors (`maxScoreTopK`, `boundedTopK`, `accumulatedTopK`). */
export type TopK = (cursors: readonly ScoreCursor[], opts: TopKOptions) => DocHit[];

/** First index ≥ `from` of `docs` (increasing) whose document is ≥ `target`. */
function lowerBound(docs: Int32Array, from: number, target: number): number {
  let lo = from;
  let hi = docs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Cursor `c`'s postings `from` .. `to` as a cursor of their own: the same arrays' views, bounded
 * by the largest block bound among the blocks they sit in (at most `c.bound`), without block
 * bounds of their own (the window does not start on a block boundary), with the cursor's bounds
 * per region of documents (and their scale).
 */
function windowOf(c: ScoreCursor, from: number, to: number): ScoreCursor {
  let bound = c.bound;
  if (c.blockMax) {
    // The largest block's scaled is the largest scaled block (scaling by a positive number keeps the order).
    let most = 0;
    for (let b = from >> BLOCK_SHIFT; b <= (to - 1) >> BLOCK_SHIFT; b++) if (c.blockMax[b] > most) most = c.blockMax[b];
    bound = most * (c.blockScale ?? 1);
  }
  return scoreCursor({
    docs: c.docs.subarray(from, to),
    tfs: c.tfs.map((t) => t && t.subarray(from, to)),
    vals: c.vals?.map((v) => v && v.subarray(from, to)),
    idf: c.idf,
    scoring: c.scoring,
    factors: c.factors,
    bound,
    blockScale: c.blockScale,
    regions: c.regions,
    distinct: c.distinct,
  });
}

/**
 * `opts` with `floor` and `known` as given, as an object of one shape (every field of
 * `TopKOptions`, in one order, made here only) whatever the caller's: the scorers' loads of
 * `opts.whole` and `opts.idOf` met the caller's object, its spread copy with `known` cleared and
 * its copies with a floor as different maps, and V8 threw away `boundedTopK`'s optimised code
 * 219 times in one 1M run ("wrong map"); the window after such a deopt runs in the unoptimised
 * tiers until the concurrent compiler, short of a core on a busy machine, makes it again: 50-100x
 * the CPU a posting (issue 40).
 */
function windowOptions(opts: TopKOptions, floor: number, known: readonly number[] | undefined): TopKOptions {
  return {
    k: opts.k,
    idOf: opts.idOf,
    keep: opts.keep,
    coordination: opts.coordination,
    maxCoordination: opts.maxCoordination,
    floor,
    known,
    counted: opts.counted,
    whole: opts.whole,
    scratch: opts.scratch,
    sample: opts.sample,
  };
}

/**
 * `topK(cursors, opts)` computed a window of documents at a time, `pause()` awaited between
 * windows, so that one query never holds the event loop for long. Windows are ranges of
 * document ids holding about as many postings as the scorer gets through in `sizing.ms` at its
 * last window's pace (`sizing.pace`, then this query's), at least `sizing.postings` and at most
 * `sizing.most` (`sizing.mostOpen` while a window has no floor to prune from); `pause()` is
 * awaited after the last window too, so the caller's next work starts a turn of its own. Each
 * window's best `opts.k` are exact (every document's score is summed from the same cursors in
 * the same order, so to the same bits), and the best `opts.k` of their union, by score then id,
 * are the whole query's, however the ids are cut. Once k hits are found, a window starts from
 * their k-th score (`TopKOptions.floor`), so it prunes as the one pass would. A query over
 * fewer postings than its first window is `topK` as is.
 */
export async function windowedTopK(
  topK: TopK,
  cursors: readonly ScoreCursor[],
  opts: TopKOptions,
  pause: () => Promise<void>,
  sizing: WindowSizing = {},
): Promise<DocHit[]> {
  const least = sizing.postings ?? WINDOW_POSTINGS;
  const fewest = Math.min(least, sizing.fewest ?? least);
  const most = Math.max(least, sizing.most ?? Infinity);
  const mostOpen = Math.min(most, Math.max(fewest, sizing.mostOpen ?? most));
  const ms = sizing.ms ?? WINDOW_MS;
  const now = sizing.now ?? (() => performance.now());
  const { pace } = sizing;
  const sized = (rate: number | undefined) =>
    !(ms > 0) ? least : rate === undefined ? fewest : Math.min(most, Math.max(fewest, Math.floor(rate * ms)));
  let postings = 0;
  let end = 0;
  for (const { docs } of cursors) {
    postings += docs.length;
    if (docs.length > 0) end = Math.max(end, docs[docs.length - 1] + 1);
  }
  const fromKnown = opts.known !== undefined;
  // A cursor scored without values (a term's first use at an index version in a pass that does
  // not keep them: RM3's expansion terms) costs more a posting than one with them, so such passes
  // keep a pace of their own: at 1M documents the first full RM3 queries after a build had
  // expanded-pass windows of 67-93 ms of the loop thread's CPU (BENCHMARKS.md, facet-fast).
  const cold = cursors.some((c) => c.docs.length > 0 && !c.vals);
  let rate = pace?.of(topK, fromKnown, cold);
  let target = sized(rate);
  // A window with a floor to prune from (a k-th score so far, or given) may be as long as the pace
  // says; the others at most `mostOpen`.
  const floorGiven = (opts.floor ?? -Infinity) > -Infinity || (opts.known?.length ?? 0) >= opts.k;
  const bounded = (found: number) => (!(ms > 0) || floorGiven || found >= opts.k ? target : Math.min(target, mostOpen));
  const timed = (run: () => DocHit[], held: number, parts: number, span: number): DocHit[] => {
    const started = now();
    const found = tracedWindow(topK, fromKnown, cold, held, { cursors: parts, span, rerun: !opts.counted }, run);
    const took = now() - started;
    // A window smaller than `fewest` (or too fast to time) says little of the pace.
    if (took > 0 && held >= fewest) {
      rate = nextPace(rate, held / took);
      pace?.set(topK, rate, fromKnown, cold);
      target = sized(rate);
    }
    return found;
  };
  const given = opts.floor ?? -Infinity;
  if (postings <= bounded(0))
    return timed(() => topK(cursors, windowOptions(opts, given, opts.known)), postings, cursors.length, end);
  // Known documents (`TopKOptions.known`) are scored once over the whole cursors: their floor
  // holds for every window, where only the window's own known documents would be seen.
  const baseFloor = opts.known ? knownFloor(cursors, opts) : given;
  const at = new Int32Array(cursors.length);
  let best: DocHit[] = [];
  let left = postings;
  for (let lo = 0; lo < end;) {
    // About `target` postings: that share of the ids left (postings spread about evenly over them).
    const size = bounded(best.length);
    const hi = left <= size ? end : Math.min(end, lo + Math.max(1, Math.ceil(((end - lo) * size) / left)));
    const part: ScoreCursor[] = [];
    let held = 0;
    for (let i = 0; i < cursors.length; i++) {
      const c = cursors[i];
      const to = lowerBound(c.docs, at[i], hi);
      if (to > at[i]) part.push(windowOf(c, at[i], to));
      held += to - at[i];
      at[i] = to;
    }
    // The k-th best score so far: documents of this window below it cannot make the page.
    const found = timed(
      () =>
        topK(
          part,
          windowOptions(
            opts,
            best.length < opts.k ? baseFloor : Math.max(baseFloor, best[opts.k - 1].score),
            undefined,
          ),
        ),
      held,
      part.length,
      hi - lo,
    );
    if (found.length) best = [...best, ...found].sort(byRank).slice(0, opts.k);
    left -= held;
    lo = hi;
    // After the last window too: what follows (RM3's expansion, the next pass's set-up) would
    // otherwise run in its turn (a 104.6 ms turn ended at the expanded pass's first pause).
    await pause();
  }
  return best;
}
