import type { Stepwise } from '../lib/yield-to-loop';

/**
 * One build a step at a time, per generation of what it is built from (`DocColumns.generation`),
 * shared by everyone who asks for it: a caller that stops part-way (the background preparation
 * hands the query gate back between slices: `EmbeddedIndex`) leaves the build where it is, and the
 * next caller of the same generation continues it instead of starting over; a caller of another
 * generation starts a new one (the old one is dropped). Callers take turns (under the query gate),
 * never step it at once.
 */
export class SharedBuild<T> {
  private job: Stepwise<T> | undefined;
  private jobAt = -1;
  private done: { readonly value: T; readonly at: number } | undefined;

  /** Runs (or continues) the build of `generation`, made by `make` if none is under way, to its end. */
  *run(generation: number, make: () => Stepwise<T>): Generator<void, T> {
    if (this.done?.at === generation) return this.done.value;
    if (!this.job || this.jobAt !== generation) {
      this.job = make();
      this.jobAt = generation;
      this.done = undefined;
    }
    const job = this.job;
    for (;;) {
      const step = job.next();
      if (step.done) {
        if (this.job === job) {
          this.job = undefined;
          this.done = { value: step.value, at: generation };
        }
        return step.value;
      }
      yield;
    }
  }
}
