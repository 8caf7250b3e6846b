import type { TimeSlicer } from './yield-to-loop';

/** A job done a step at a time: each `next()` is one step; the last gives the result. */
export type Stepwise<T> = Generator<void, T>;

/** Runs `job` to its end at once (tests, small inputs). */
export function atOnce<T>(job: Stepwise<T>): T {
  for (;;) {
    const r = job.next();
    if (r.done) return r.value;
  }
}

/** Runs `job` to its end, letting `slicer` yield to the event loop between steps. */
export async function inSlices<T>(job: Stepwise<T>, slicer: TimeSlicer): Promise<T> {
  for (;;) {
    const r = job.next();
    if (r.done) return r.value;
    await slicer.maybeYield();
  }
}
