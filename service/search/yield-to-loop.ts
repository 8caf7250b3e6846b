/**
 * One party a turn of the event loop for all of the index's background work. Every job that
 * runs in slices (writes, merges, the vocabulary build, queries, the query gate's wake-ups)
 * yields through this one queue, and the queue resumes one of them per turn, in the order they
 * yielded: an immediate queued while immediates run goes to the next turn, after timers and
 * I/O. With a `setImmediate` each, every job that yielded in one turn resumed in the same next
 * one, their slices back to back: at 200k documents the longest stalls of an ingest with queries
 * were a write's, a merge's and a query's slice in one turn (issue 28, BENCHMARKS.md "Stalls at
 * 200k: what fills them").
 */
const waiting: Array<() => void> = [];
let scheduled = false;

function runOne(): void {
  const next = waiting.shift();
  // The next party's turn is queued before this one runs: it queues its own yield behind it.
  if (waiting.length > 0) setImmediate(runOne);
  else scheduled = false;
  next?.();
}

/** Runs `fn` in a later turn of the event loop, one such callback a turn, in the order they were queued. */
export function nextTurn(fn: () => void): void {
  waiting.push(fn);
  if (scheduled) return;
  scheduled = true;
  setImmediate(runOne);
}

/** Hands the event loop to whatever is waiting (timers, I/O, other requests, other slices) before going on. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => nextTurn(resolve));
}

/**
 * Cuts a long synchronous job into slices of about `sliceMs`: call `maybeYield()` between units of
 * work, and it yields to the event loop once the current slice has run that long.
 */
export class TimeSlicer {
  private started = performance.now();

  constructor(private readonly sliceMs: number) {}

  /**
   * Waits for a turn of its own, then starts a slice: for a job's first slice, which would
   * otherwise run in the turn that started the job (after another job's slice, or in a
   * request's callback).
   */
  async begin(): Promise<void> {
    await yieldToLoop();
    this.started = performance.now();
  }

  /** Starts a new slice now (after the job waited for something else). */
  restart(): void {
    this.started = performance.now();
  }

  /** Yields if the current slice is used up, then starts a new one. */
  async maybeYield(): Promise<void> {
    if (performance.now() - this.started < this.sliceMs) return;
    await yieldToLoop();
    this.started = performance.now();
  }
}
