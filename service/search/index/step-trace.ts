import { readFileSync } from 'node:fs';
import { loopThreadCpu } from '../../metrics/event-loop-delay';

/**
 * A log of the long steps of a query's first pass (`PostingsIndex.cursorJob`), for the benches
 * (`--steps` of bench/search/delete.ts and filters.ts): each step that takes more than `ms` of
 * the loop thread's CPU is written with the sites it went from and to (the job marks each yield,
 * `site`), its term and postings, its minor page faults (the process's), the loop thread's user
 * and system clock ticks, and the heap it grew by. Off (no cost but a branch a step) unless a
 * bench turns it on: at 1M documents a step of 104.6 ms with tombstones in the base and one of
 * 85.2 ms in a filtered query were seen and not attributed (issues 39 and 40).
 */
export interface StepTrace {
  /** Loop-thread CPU over which a step is written, ms. */
  readonly ms: number;
  /** Where the lines go. */
  readonly log: (line: string) => void;
}

let trace: StepTrace | undefined;

/** Turns the log on (`undefined`: off). */
export function traceSteps(t: StepTrace | undefined): void {
  trace = t;
}

/** Whether the log is on. */
export function tracing(): boolean {
  return trace !== undefined;
}

// Where the job is: the site of its last yield, the term it works on, the postings in hand.
const where = { at: '', term: '', n: 0 };

/** Marks the site of the job's next yield (when the log is on). */
export function site(at: string, term?: string, n?: number): void {
  if (!trace) return;
  where.at = at;
  if (term !== undefined) where.term = term;
  if (n !== undefined) where.n = n;
}

/** The loop thread's user and system CPU so far, clock ticks (`/proc/<pid>/task/<pid>/stat`; 0 elsewhere). */
function ticks(): [number, number] {
  try {
    const stat = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [Number(f[11]), Number(f[12])];
  } catch {
    return [0, 0];
  }
}

/** Runs `job` step by step, writing each step over the log's `ms` (see `StepTrace`). */
export function* traced<T>(name: string, job: Generator<void, T>): Generator<void, T> {
  const cpu = loopThreadCpu();
  where.at = 'start';
  where.term = '';
  where.n = 0;
  for (;;) {
    const t = trace;
    const from = where.at;
    const faults = process.resourceUsage().minorPageFault;
    const heap = process.memoryUsage().heapUsed;
    const [u0, s0] = ticks();
    const start = cpu();
    const r = job.next();
    const ms = (cpu() - start) * 1000;
    if (t && ms > t.ms) {
      const f = process.resourceUsage().minorPageFault - faults;
      const grew = (process.memoryUsage().heapUsed - heap) / 1048576;
      const [u1, s1] = ticks();
      const to = r.done ? 'done' : where.at;
      t.log(
        `[step] ${name} ${ms.toFixed(1)} ms cpu: ${from} -> ${to} term=${where.term} n=${where.n} faults=${f} user/sys ticks=${u1 - u0}/${s1 - s0} heap+=${grew.toFixed(1)}MB`,
      );
    }
    if (r.done) return r.value;
    yield;
  }
}

let windows: StepTrace | undefined;

/**
 * Turns the window log on (`undefined`: off): each window of `windowedTopK` that takes more than
 * `t.ms` of the loop thread's CPU is written with its scorer, kind of pass, postings, CPU and wall
 * time, its start (`performance.now()`, to set beside `--trace-gc` and V8's `--logfile` times),
 * ns a posting, minor page faults (the process's) and the loop thread's user and system clock
 * ticks (for the benches: `--windows` of bench/search/filters.ts). Off (no cost but a branch a
 * window) unless a bench turns it on: at 1M documents under load single windows took 50-100x as
 * long a posting as their neighbours (issue 40).
 */
export function traceWindows(t: StepTrace | undefined): void {
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
  const [u0, s0] = ticks();
  const at = performance.now();
  const start = cpu();
  const r = run();
  const ms = (cpu() - start) * 1000;
  const wall = performance.now() - at;
  windowsTraced.n += 1;
  windowsTraced.postings += postings;
  if (ms > t.ms) {
    const f = process.resourceUsage().minorPageFault - faults;
    const [u1, s1] = ticks();
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
