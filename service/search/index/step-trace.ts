import { loopThreadCpu, loopThreadTicks } from '../../metrics/event-loop-delay';
import type { LoopCpuTrace } from '../../metrics/loop-cpu-trace';

let trace: LoopCpuTrace | undefined;

/**
 * Turns the step log on (`undefined`: off): a log of the long steps of a query's first pass
 * (`PostingsIndex.cursorJob`), for the benches (`--steps` of bench/search/delete.ts and
 * filters.ts). Each step that takes more than `t.ms` of the loop thread's CPU is written with the
 * sites it went from and to (the job marks each yield, `site`), its term and postings, its minor
 * page faults (the process's), the loop thread's user and system clock ticks, and the heap it grew
 * by. Off (no cost but a branch a step) unless a bench turns it on: at 1M documents a step of
 * 104.6 ms with tombstones in the base and one of 85.2 ms in a filtered query were seen and not
 * attributed (issues 39 and 40).
 */
export function traceSteps(t: LoopCpuTrace | undefined): void {
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

/** Runs `job` step by step, writing each step over the log's `ms` (see `traceSteps`). */
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
    const [u0, s0] = loopThreadTicks();
    const start = cpu();
    const r = job.next();
    const ms = (cpu() - start) * 1000;
    if (t && ms > t.ms) {
      const f = process.resourceUsage().minorPageFault - faults;
      const grew = (process.memoryUsage().heapUsed - heap) / 1048576;
      const [u1, s1] = loopThreadTicks();
      const to = r.done ? 'done' : where.at;
      t.log(
        `[step] ${name} ${ms.toFixed(1)} ms cpu: ${from} -> ${to} term=${where.term} n=${where.n} faults=${f} user/sys ticks=${u1 - u0}/${s1 - s0} heap+=${grew.toFixed(1)}MB`,
      );
    }
    if (r.done) return r.value;
    yield;
  }
}
