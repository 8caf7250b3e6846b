/**
 * What fills an event-loop stall (`bench/search/stall.ts --attribute`): a timeline of the
 * garbage-collection pauses (`PerformanceObserver` 'gc' entries: kind, start, duration) and of
 * the index's own slices (every `TimeSlicer` slice that ended in a yield, named by the function
 * that sliced: the write, a merge, the vocabulary build, a query), and a 1 ms interval timer
 * whose late ticks mark the stalls. For each stall longer than `threshold` it gives what ran in
 * it. Works on an older tree too (it patches `TimeSlicer`'s prototype, which every tree has).
 */
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { TimeSlicer } from '../../service/lib/yield-to-loop';
import { loopThreadCpu } from '../../service/metrics/event-loop-delay';

interface Span {
  readonly start: number;
  readonly end: number;
  readonly what: string;
  /** For a slice of `LONG_SLICE` ms or more: where it yielded (the frames below `maybeYield`). */
  readonly where?: string;
}

// A slice this long records where it yielded: the unit of work before that point overran.
const LONG_SLICE = 20;

/** The frames of this repository in `stack` below `maybeYield`, innermost first, as `function@file:line`. */
function frames(stack: string | undefined): string {
  return (stack ?? '')
    .split('\n')
    .slice(2)
    .map((l) => /at (?:async )?([\w.<>$]+)? ?\(?.*?([\w-]+)\.ts:(\d+)/.exec(l))
    .filter((m): m is RegExpExecArray => !!m && !m[0].includes('node_modules') && !m[0].includes('stall-attribution'))
    .slice(0, 4)
    .map((m) => `${m[1] ?? '?'}@${m[2]}:${m[3]}`)
    .join(' < ');
}

/** Units of work between two `maybeYield` calls of at least `UNIT_MS`, grouped by where they began and ended (`--units`). */
export interface LongUnit {
  readonly where: string;
  readonly n: number;
  readonly max: number;
  /** The longest less the GC pauses inside it. */
  readonly maxNoGc: number;
}

const UNIT_MS = 8;

/** One stall and what ran in it, milliseconds. */
export interface AttributedStall {
  readonly start: number;
  readonly ms: number;
  /** GC pause time inside the stall by kind. */
  readonly gc: Record<string, number>;
  /** Slices (name and ms) that ended inside the stall, in order. */
  readonly slices: string[];
  /** Stall time covered by neither a slice nor a GC pause (a job's last slice, queries' tails, callbacks). */
  readonly other: number;
  /**
   * CPU time of the event loop's thread in the stall (`loopThreadCpu`): on a busy machine most of
   * a stall's wall time can be time the thread waited for a core, so this is what tells which
   * stalls the process itself made long.
   */
  readonly loopCpu: number;
}

const GC_KIND: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

const round = (x: number) => Math.round(x * 10) / 10;

/** Names the function that called `maybeYield` (once per slicer: a stack is not free). */
function caller(): string {
  const line = (new Error().stack ?? '').split('\n')[3] ?? '';
  // A named function, else the file and line of an arrow function.
  return /at (?:async )?([\w.<>]+) /.exec(line)?.[1] ?? /([\w-]+\.ts:\d+)/.exec(line)?.[1] ?? '?';
}

/** Starts recording; `stop()` ends it and returns the stalls longer than `threshold` ms, with what filled them. */
export function attribute(
  threshold = 30,
  units = false,
): { stop: () => AttributedStall[]; slicesPerGap: () => Record<string, number>; longUnits: () => LongUnit[] } {
  const slices: Span[] = [];
  const unitSpans: Span[] = [];
  const gcs: Span[] = [];
  // The slicer's private fields, read from outside.
  type Slicer = { started: number; sliceMs: number };
  const names = new WeakMap<Slicer, string>();
  // With `units`, every call of `maybeYield` keeps its stack (not free: a few µs a call), so that a
  // long slice also names where its last unit of work began (the previous call), not only where it ended.
  const previous = new WeakMap<Slicer, { at: number; stack: Error }>();
  const proto = TimeSlicer.prototype as unknown as { maybeYield: () => Promise<void> };
  const original = proto.maybeYield;
  proto.maybeYield = function (this: Slicer) {
    const now = performance.now();
    const before = previous.get(this);
    if (now - this.started >= this.sliceMs) {
      let name = names.get(this);
      if (!name) names.set(this, (name = caller()));
      let where: string | undefined;
      if (now - this.started >= LONG_SLICE) {
        where = frames(new Error().stack);
        // The last unit: from the previous call in this slice (or the slice's start) to here.
        if (before && before.at > this.started)
          where = `unit ${round(now - before.at)} ms from ${frames(before.stack.stack)} to ${where}`;
      }
      slices.push({ start: this.started, end: now, what: name, ...(where ? { where } : {}) });
    }
    if (units) {
      // Every unit of `UNIT_MS` or more (from the previous call, or the slice's start, to here), by where it began and ended.
      const from = before && before.at > this.started ? before : undefined;
      if (now - (from?.at ?? this.started) >= UNIT_MS)
        unitSpans.push({
          start: from?.at ?? this.started,
          end: now,
          what: `${from ? frames(from.stack.stack) : 'slice start'} → ${frames(new Error().stack)}`,
        });
      previous.set(this, { at: now, stack: new Error() });
    }
    return original.call(this);
  };
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as Array<PerformanceEntry & { detail?: { kind?: number } }>) {
      gcs.push({
        start: e.startTime,
        end: e.startTime + e.duration,
        what: GC_KIND[e.detail?.kind ?? 0] ?? String(e.detail?.kind),
      });
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const stalls: Array<{ start: number; end: number; cpu: number }> = [];
  const ticks: number[] = [];
  const loopCpu = loopThreadCpu();
  let last = performance.now();
  let lastCpu = loopCpu();
  const tick = setInterval(() => {
    const now = performance.now();
    const cpu = loopCpu();
    ticks.push(now);
    if (now - last > threshold) stalls.push({ start: last, end: now, cpu: (cpu - lastCpu) * 1000 });
    last = now;
    lastCpu = cpu;
  }, 1);
  return {
    // Between two ticks of the timer the loop ran once (or more, when idle): how many slices ended
    // in each gap, counted over the gaps that held any (at most one is one slice a turn).
    slicesPerGap: () => {
      const out: Record<string, number> = {};
      let s = 0;
      for (let i = 1; i < ticks.length; i++) {
        let n = 0;
        while (s < slices.length && slices[s].end <= ticks[i]) {
          if (slices[s].end > ticks[i - 1]) n += 1;
          s += 1;
        }
        if (n > 0) out[n > 3 ? '4+' : String(n)] = (out[n > 3 ? '4+' : String(n)] ?? 0) + 1;
      }
      return out;
    },
    longUnits: () => {
      const by = new Map<string, { n: number; max: number; maxNoGc: number }>();
      for (const u of unitSpans) {
        const gc = gcs.reduce((sum, g) => sum + Math.max(0, Math.min(u.end, g.end) - Math.max(u.start, g.start)), 0);
        const e = by.get(u.what) ?? { n: 0, max: 0, maxNoGc: 0 };
        e.n += 1;
        e.max = Math.max(e.max, round(u.end - u.start));
        e.maxNoGc = Math.max(e.maxNoGc, round(u.end - u.start - gc));
        by.set(u.what, e);
      }
      return [...by].map(([where, e]) => ({ where, ...e })).sort((a, b) => b.max - a.max);
    },
    stop: () => {
      clearInterval(tick);
      observer.disconnect();
      proto.maybeYield = original;
      return stalls.map(({ start, end, cpu }) => {
        const gc: Record<string, number> = {};
        let gcMs = 0;
        for (const g of gcs) {
          const ms = Math.min(end, g.end) - Math.max(start, g.start);
          if (ms <= 0) continue;
          gc[g.what] = round((gc[g.what] ?? 0) + ms);
          gcMs += ms;
        }
        const inside = slices.filter((s) => s.end > start && s.end <= end);
        const sliced = inside.reduce((sum, s) => sum + Math.min(end, s.end) - Math.max(start, s.start), 0);
        return {
          start: round(start),
          ms: round(end - start),
          gc,
          slices: inside.map(
            (s) => `${s.what} ${round(s.end - Math.max(start, s.start))}${s.where ? ` (${s.where})` : ''}`,
          ),
          // GC pauses happen inside slices: what neither covers is the rest.
          other: round(Math.max(0, end - start - Math.max(sliced, gcMs))),
          loopCpu: round(cpu),
        };
      });
    },
  };
}

/** Totals over stalls: how many had each kind of filler, and the sums. */
export function summarize(stalls: readonly AttributedStall[]): Record<string, number> {
  const out: Record<string, number> = { stalls: stalls.length };
  for (const s of stalls) {
    for (const [k, v] of Object.entries(s.gc)) out[`gc:${k}`] = round((out[`gc:${k}`] ?? 0) + v);
    out.multiSlice = (out.multiSlice ?? 0) + (s.slices.length > 1 ? 1 : 0);
    out.other = round((out.other ?? 0) + s.other);
  }
  return out;
}
