import { nextTurn, yieldToLoop } from '../lib/yield-to-loop';

/**
 * Keeps an index still while a query runs in slices: queries run one at a time, in order of
 * arrival, and a write waits (`quiet`) while one is running, so each query reads one state of
 * the index from its first slice to its last, and a query's scratch is never shared.
 *
 * Between slices the event loop serves everything else. When a query ends, the writes waiting
 * go first, each in its own turn of the event loop, then the next query in a turn of its own.
 */
export class QueryGate {
  private running = false;
  // Between a query's end and the next query's start, while the writes it let in are woken: a
  // query that arrives meanwhile queues, so it cannot take the gate before them.
  private waking = false;
  private readonly queries: Array<() => void> = [];
  private readonly writers: Array<() => void> = [];

  /** Whether a query is under way (or handed the gate and about to run). */
  get busy(): boolean {
    return this.running;
  }

  /** Runs `query` once the queries before it are done; writes wait until it settles. */
  async run<T>(query: () => Promise<T>): Promise<T> {
    if (this.running || this.waking || this.queries.length > 0)
      await new Promise<void>((resolve) => this.queries.push(resolve));
    else {
      // Even with the gate free, the query's first slice waits for a turn of its own: started
      // where it arrives (an HTTP request's callback, a check phase), it ran in the same turn as
      // a write's or a merge's slice. Writes wait meanwhile.
      this.running = true;
      await yieldToLoop();
    }
    this.running = true;
    try {
      return await query();
    } finally {
      this.release();
    }
  }

  /**
   * Settles at once when no query is running or waiting, else once none is running (before a
   * write changes the index; a query that arrived first, queued while the last one's writes
   * are woken, runs first); true if it waited (a sliced writer then starts a fresh slice).
   */
  async quiet(): Promise<boolean> {
    if (!this.running && this.queries.length === 0) return false;
    do await new Promise<void>((resolve) => this.writers.push(resolve));
    while (this.running);
    return true;
  }

  private release(): void {
    this.running = false;
    const writers = this.writers.splice(0);
    if (writers.length === 0 && this.queries.length === 0) return;
    this.waking = true;
    // One party a turn of the event loop: each waiting writer's slice, then the next query, in
    // the turn queue every sliced job yields through (`nextTurn`), so no other job's slice runs
    // in the same turn either. Woken together, they would all run in one turn (a writer's slice,
    // a merge step and the next query's first slice back to back: turns of 25-30 ms).
    const wake = (i: number): void => {
      if (i < writers.length) {
        writers[i]();
        nextTurn(() => wake(i + 1));
        return;
      }
      // A write let in first may have run; the next query starts now, in arrival order (those
      // that arrived while the writes were woken queued behind), unless one is running.
      this.waking = false;
      if (this.running) return;
      const next = this.queries.shift();
      if (!next) return;
      this.running = true;
      next();
    };
    nextTurn(() => wake(0));
  }
}
