/**
 * The one way the service hands the event loop back in the middle of long work: every job that
 * runs in steps or slices (a batch's validation and stamping, the store's record encoding, an
 * answer streamed in chunks, index writes, merges, the vocabulary build, queries, the query
 * gate's wake-ups) yields through this one queue, and the queue resumes one of them per turn of
 * the event loop, in the order they yielded. An immediate queued while immediates run goes to the
 * next turn, after timers and I/O.
 *
 * With a `setImmediate` each, every job that yielded in one turn resumed in the same next one,
 * their slices back to back: at 200k documents the longest stalls of an ingest with queries were a
 * write's, a merge's and a query's slice in one turn (issue 28, BENCHMARKS.md "Stalls at 200k:
 * what fills them"); a 10,000-item upload's longest turn was its answer's slice, the store's step
 * and the index's slice together, 41-62 ms (issue 37), until the request path's steps joined the
 * queue too.
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

  /** Whether the current slice is used up (a job that hands the loop back some other way, as a gate's holder does, ends its slice). */
  due(): boolean {
    return performance.now() - this.started >= this.sliceMs;
  }

  /** Yields if the current slice is used up, then starts a new one. */
  async maybeYield(): Promise<void> {
    if (!this.due()) return;
    await yieldToLoop();
    this.started = performance.now();
  }
}

/**
 * Budget of one step of a request's work over its many parts (the items of a batch), ms. One part
 * is never split: a step costs at most the budget plus the largest part (an item's body is at most
 * a megabyte).
 */
export const STEP_BUDGET_MS = 5;

/**
 * Work over a request's many parts in steps: `step()` after each part returns undefined at once
 * while the current step is shorter than `budgetMs` (no promise to await on the fast path), and
 * otherwise a promise that resolves in a turn of its own (`nextTurn`), so other requests, timers,
 * I/O and other sliced jobs run between steps.
 */
export function stepper(budgetMs = STEP_BUDGET_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < budgetMs) return undefined;
    return new Promise<void>((resolve) =>
      nextTurn(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}

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
