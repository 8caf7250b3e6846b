import { loopThreadCpu } from '../../service/metrics/event-loop-delay';

/** Runs of `work` that `cpuMs` times; it answers the least. */
const RUNS = 3;

/**
 * The CPU time of the event loop's thread that `work` takes, ms: the least of `RUNS` runs (so
 * `work` must be repeatable: the callers parse or tokenize the same text again).
 *
 * The linear-time tests bound the work of one call on hostile input ("well under a second"): the
 * defects they guard took seconds to hours, the fixed code tens of ms. Measured by the clock, the
 * bound also counted the time the jest worker waited for a core, so it depended on what else the
 * machine ran (issue 36). Measured as the process's CPU time it still counted what the call did
 * not do: the GC's helper threads marking a jest worker's heap of hundreds of MB beside it, and a
 * collection's pause that fell in it (a 1 MB heading that takes ~100 ms alone took 1,024 ms of the
 * process's CPU in a full run at load ~5). The loop thread's time leaves the helpers out, and the
 * least of three runs leaves out a pause that fell in one; a defect of seconds is slow in every run.
 */
export function cpuMs(work: () => void): number {
  const cpu = loopThreadCpu();
  let least = Infinity;
  for (let run = 0; run < RUNS; run++) {
    const before = cpu();
    work();
    least = Math.min(least, (cpu() - before) * 1000);
  }
  return least;
}

/**
 * Holds the event loop for `ms` of this process's CPU time (not of the clock: a busy machine only
 * makes it longer), from the check phase as a request handler would (an event-loop monitor's own
 * timer runs in the timers phase), then lets a monitor's timer run, late, and record the delay.
 */
export async function holdLoop(ms: number): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  const now = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const until = now() + ms;
  while (now() < until);
  await new Promise((resolve) => setTimeout(resolve, 50));
}
