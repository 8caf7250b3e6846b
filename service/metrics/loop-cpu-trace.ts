/**
 * A trace of the pieces of work that take long on the event loop's thread, for the benches: each
 * piece that takes more than `ms` of the loop thread's CPU (`loopThreadCpu`) is written to `log`
 * with what it was. The index's step log (search/index/step-trace.ts: a step of a job) and the
 * scorers' window log (search/scoring/window-trace.ts: a window of `windowedTopK`) each take one;
 * it lives here because neither room may import the other.
 */
export interface LoopCpuTrace {
  /** Loop-thread CPU over which a piece of work is written, ms. */
  readonly ms: number;
  /** Where the lines go. */
  readonly log: (line: string) => void;
}
