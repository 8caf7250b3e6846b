import { i32, u16 } from '../../lib/untracked-arrays';
import { atOnce } from '../../lib/yield-to-loop';

/* The base segment's postings in CSR form, and a term's run merged over fields, kept per base. */

/** A term's base postings merged over fields (`BaseRunCache`). */
export interface BaseRun {
  /** Document ids, increasing (deleted documents included). */
  readonly docs: Int32Array;
  /** Per field, the term's tf in each of `docs` (0 = not in that field), or null when no document's field holds it. */
  readonly tfs: ReadonlyArray<Uint16Array | null>;
}

/** Postings of every term of the documents below `end`, per field in CSR form. */
export interface BaseSegment {
  readonly end: number;
  /** Per field: term t's postings sit at `start[t]` .. `start[t + 1]` (terms newer than the segment have none). */
  readonly start: readonly Int32Array[];
  readonly docs: readonly Int32Array[];
  readonly tfs: readonly Uint16Array[];
}

/**
 * The least bytes the cache of the terms' base runs merged over fields may hold (`BaseRunCache`):
 * what it held as a fixed count before it grew with the index (4M postings, ~8 bytes each: 4 of
 * document id and 2 of tf per field holding the term).
 */
export const RUN_CACHE_MIN_BYTES = 32 << 20;

/**
 * Postings, at most, of the runs a merge builds ahead in its new base (`recentRuns`): the most
 * recently used terms' up to this many, whatever the cache holds (its new arrays count as a
 * merge's allocation, and every 64 MB of typed arrays starts a full collection).
 */
export const RUNS_AHEAD_POSTINGS = 4_000_000;

/**
 * The most bytes the cache of base runs holds: what the base segment's postings take (every
 * field's document ids and tfs), at least `RUN_CACHE_MIN_BYTES`. With a fixed 4M postings it
 * held the common terms of 200k documents, not of 1M, where one stream of the 93 Vaswani queries
 * and their RM3 expansions reads ~14M postings: each query built again the runs the previous
 * ones had evicted, ~4.7 MB of fresh typed arrays a query, the largest share of what started a
 * full collection every few seconds while a `delete_where` ran (issue 39). Runs copy a base's
 * postings (merged over fields), so about the whole base's fits.
 */
export function runCacheBudget(base: BaseSegment, least = RUN_CACHE_MIN_BYTES): number {
  let n = 0;
  for (let f = 0; f < base.docs.length; f++) n += base.docs[f].byteLength + base.tfs[f].byteLength;
  return Math.max(least, n);
}

/**
 * The base segment's runs of the terms searched lately (`buildRun`), kept until the next merge:
 * they change only with the base, while the BM25 values built from them follow every write.
 * Least recently used go first past `runCacheBudget` bytes (a run that is a view of the base's
 * own arrays counts nothing).
 */
export class BaseRunCache {
  private runs = new Map<number, BaseRun>();
  private of: BaseSegment | undefined;
  private size = 0;
  private budget: number;

  /** `least`: the budget's floor in bytes (`runCacheBudget`; tests use small ones). */
  constructor(private readonly least = RUN_CACHE_MIN_BYTES) {
    this.budget = least;
  }

  /** Term ids of the runs kept, least recently used first. */
  terms(): number[] {
    return [...this.runs.keys()];
  }

  /**
   * Term ids of the most recently used runs holding at most `postings` postings in all, least
   * recently used first: the runs a merge builds ahead (`RUNS_AHEAD_POSTINGS`).
   */
  recent(postings: number): number[] {
    const all = this.terms();
    let held = 0;
    let from = all.length;
    while (from > 0) {
      const n = this.runs.get(all[from - 1])!.docs.length;
      if (held + n > postings) break;
      held += n;
      from -= 1;
    }
    return all.slice(from);
  }

  /** Term `t`'s run in `base`, kept or built now (undefined when no field of the base holds it). */
  get(base: BaseSegment, nf: number, t: number): BaseRun | undefined {
    return atOnce(this.getSteps(base, nf, t));
  }

  /** `get`, a run built in steps (`runSteps`); `base` must stay the one served until it is done. */
  *getSteps(base: BaseSegment, nf: number, t: number): Generator<void, BaseRun | undefined> {
    if (this.of !== base) this.reset(base, new Map());
    const hit = this.runs.get(t);
    if (hit) {
      this.runs.delete(t);
      this.runs.set(t, hit);
      return hit;
    }
    const run = yield* runSteps(base, nf, t);
    if (run) this.keep(t, run);
    return run;
  }

  /** Starts over for a new base, with the runs a merge built ahead in it. */
  reset(base: BaseSegment, runs: ReadonlyMap<number, BaseRun>): void {
    this.runs = new Map();
    this.of = base;
    this.size = 0;
    this.budget = runCacheBudget(base, this.least);
    for (const [t, run] of runs) this.keep(t, run);
  }

  private keep(t: number, run: BaseRun): void {
    this.runs.set(t, run);
    this.size += this.held(run);
    for (const [old, e] of this.runs) {
      if (this.size <= this.budget || old === t) break;
      this.runs.delete(old);
      this.size -= this.held(e);
    }
  }

  /** Bytes `run` holds of its own (0 for views of the base's arrays). */
  private held(run: BaseRun): number {
    const base = this.of!;
    let n = 0;
    if (!base.docs.some((a) => a.buffer === run.docs.buffer)) n += run.docs.byteLength;
    for (const tf of run.tfs) if (tf && !base.tfs.some((a) => a.buffer === tf.buffer)) n += tf.byteLength;
    return n;
  }
}

/** Postings per step of `runSteps` (as `VALUE_STEP`: steps of 2^16 ran 56-94 ms of CPU before the loops were optimised). */
export const RUN_STEP = 16_384;

/**
 * The merged run of a term whose postings in one field cover its postings in every other field
 * (`lo`/`hi`: each field's range in `base`): that field's documents and tfs copied whole (a copy
 * of the range, not a k-way merge), undefined when no field covers the others. Copies, not views
 * into the base's arrays: with views warm queries were slower (2-word ~1.3x main's CPU in one
 * process at 1M, against ~1.1x with copies; not explained). `RUN_STEP` postings a step.
 */
function* coveredRun(
  base: BaseSegment,
  nf: number,
  lo: readonly number[],
  hi: readonly number[],
): Generator<void, BaseRun | undefined> {
  let wide = 0;
  for (let f = 1; f < nf; f++) if (hi[f] - lo[f] > hi[wide] - lo[wide]) wide = f;
  const docs = i32(hi[wide] - lo[wide]);
  yield* copySteps(base.docs[wide], lo[wide], hi[wide], docs);
  const tfs: Array<Uint16Array | null> = [];
  for (let f = 0; f < nf; f++) {
    if (f === wide) {
      const out = u16(hi[f] - lo[f]);
      yield* copySteps(base.tfs[f], lo[f], hi[f], out);
      tfs.push(out);
    } else if (hi[f] === lo[f]) tfs.push(null);
    else {
      const out = u16(docs.length);
      const from = base.docs[f];
      let at = 0;
      for (let i = lo[f]; i < hi[f]; i++) {
        const doc = from[i];
        while (at < docs.length && docs[at] < doc) at++;
        if (at === docs.length || docs[at] !== doc) return undefined;
        out[at] = base.tfs[f][i];
        if ((i - lo[f]) % RUN_STEP === RUN_STEP - 1) yield;
      }
      tfs.push(out);
      yield;
    }
  }
  return { docs, tfs };
}

/** Copies `from[lo … hi - 1]` into `to` (of that length), `RUN_STEP` elements a step. */
function* copySteps<A extends Int32Array | Uint16Array>(from: A, lo: number, hi: number, to: A): Generator<void, void> {
  for (let i = lo; i < hi; i += RUN_STEP) {
    to.set(from.subarray(i, Math.min(hi, i + RUN_STEP)) as never, i - lo);
    yield;
  }
}

/** Term `t`'s run in `base`, every field merged (see `BaseRunCache`), at once. */
export function buildRun(base: BaseSegment, nf: number, t: number): BaseRun | undefined {
  return atOnce(runSteps(base, nf, t));
}

/**
 * `buildRun` a step at a time, `RUN_STEP` postings a step: at 1M documents a common term's run
 * is ~500k postings, ~5 MB of fresh memory, and built in one step it was among the longest
 * steps of a merge (the runs of recent terms) and of a query's first use of a term after one
 * (issue 39). `base` must not change until it is done.
 */
export function* runSteps(base: BaseSegment, nf: number, t: number): Generator<void, BaseRun | undefined> {
  const lo = new Array<number>(nf).fill(0);
  const hi = new Array<number>(nf).fill(0);
  let fieldsWith = 0;
  let only = -1;
  let total = 0;
  for (let f = 0; f < nf; f++) {
    const s = base.start[f];
    if (t + 1 >= s.length || s[t + 1] === s[t]) continue;
    lo[f] = s[t];
    hi[f] = s[t + 1];
    fieldsWith += 1;
    only = f;
    total += hi[f] - lo[f];
  }
  if (fieldsWith === 0) return undefined;
  if (fieldsWith === 1) {
    return {
      docs: base.docs[only].subarray(lo[only], hi[only]),
      tfs: base.tfs.map((arr, f) => (f === only ? arr.subarray(lo[f], hi[f]) : null)),
    };
  }
  // When one field's run holds every document of the others (the index's `text` holds the
  // title's and the tags' terms), its run is the documents, copied whole, and the others' tfs
  // are placed along it. Else a merge of the fields' sorted runs.
  const covered = yield* coveredRun(base, nf, lo, hi);
  if (covered) return covered;
  const docs = i32(total);
  const tfs = base.tfs.map((_a, f) => (hi[f] > lo[f] ? u16(total) : null));
  const pos = lo.slice();
  let n = 0;
  for (;;) {
    let min = 0x7fffffff;
    for (let f = 0; f < nf; f++) if (pos[f] < hi[f] && base.docs[f][pos[f]] < min) min = base.docs[f][pos[f]];
    if (min === 0x7fffffff) break;
    docs[n] = min;
    for (let f = 0; f < nf; f++) {
      if (pos[f] < hi[f] && base.docs[f][pos[f]] === min) {
        tfs[f]![n] = base.tfs[f][pos[f]];
        pos[f] += 1;
      }
    }
    n += 1;
    if (n % RUN_STEP === 0) yield;
  }
  return { docs: docs.slice(0, n), tfs: tfs.map((a) => a && a.slice(0, n)) };
}
