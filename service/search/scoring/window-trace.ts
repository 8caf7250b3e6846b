import { loopThreadCpu, loopThreadTicks } from '../../metrics/event-loop-delay';
import type { LoopCpuTrace } from '../../metrics/loop-cpu-trace';

/*
 * The window log of `windowedTopK` (off by default; `--windows` of bench/search/filters.ts): what
 * each window that ran long was (see `traceWindows`). The scorers' room keeps it, beside the
 * windows it times; the first pass's step log is the index's (index/step-trace.ts).
 */

let windows: LoopCpuTrace | undefined;

/**
 * Turns the window log on (`undefined`: off): each window of `windowedTopK` that takes more than
 * `t.ms` of the loop thread's CPU is written with its scorer, kind of pass, postings, CPU and wall
 * time, its start (`performance.now()`, to set beside `--trace-gc` and V8's `--logfile` times),
 * ns a posting, minor page faults (the process's) and the loop thread's user and system clock
 * ticks (for the benches: `--windows` of bench/search/filters.ts). Off (no cost but a branch a
 * window) unless a bench turns it on: at 1M documents under load single windows took 50-100x as
 * long a posting as their neighbours (issue 40).
 */
export function traceWindows(t: LoopCpuTrace | undefined): void {
  windows = t;
}

/** Windows run while the window log was on, and their postings. */
export const windowsTraced = { n: 0, postings: 0 };

/**
 * Runs `run` (one window of `postings` postings over `cursors` cursors spanning `span` document
 * ids, of scorer `topK`, in a pass from known documents or not, with cursors without values or
 * not), writing it when the window log says so. A window written is run once more at once when
 * `rerun` (the scorer has no side effect: no `counted`), its result dropped, and the second run's
 * CPU written beside it: a window slow both times did that much work; one slow the first time
 * only met something passing (a deoptimised scorer, a GC, a vCPU the host took away).
 */
export function tracedWindow<T>(
  topK: { name: string },
  known: boolean,
  cold: boolean,
  postings: number,
  shape: { readonly cursors: number; readonly span: number; readonly rerun: boolean },
  run: () => T,
): T {
  const t = windows;
  if (!t) return run();
  const cpu = loopThreadCpu();
  const faults = process.resourceUsage().minorPageFault;
  const [u0, s0] = loopThreadTicks();
  const at = performance.now();
  const start = cpu();
  const r = run();
  const ms = (cpu() - start) * 1000;
  const wall = performance.now() - at;
  windowsTraced.n += 1;
  windowsTraced.postings += postings;
  if (ms > t.ms) {
    const f = process.resourceUsage().minorPageFault - faults;
    const [u1, s1] = loopThreadTicks();
    let again = '';
    if (shape.rerun) {
      const w = performance.now();
      const c = cpu();
      run();
      again = ` rerun=${((cpu() - c) * 1000).toFixed(1)} ms cpu (${(performance.now() - w).toFixed(1)} wall)`;
    }
    t.log(
      `[window] ${topK.name}${known ? ' known' : ''}${cold ? ' cold' : ''} ${ms.toFixed(1)} ms cpu (${wall.toFixed(1)} wall) at=${at.toFixed(1)} postings=${postings} ns/posting=${((ms * 1e6) / Math.max(1, postings)).toFixed(0)} cursors=${shape.cursors} span=${shape.span} faults=${f} user/sys ticks=${u1 - u0}/${s1 - s0}${again}`,
    );
  }
  return r;
}
