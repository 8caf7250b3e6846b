/**
 * Runs the first job of an event-loop turn at once and holds the turn's later jobs to its end
 * (`setImmediate`), where they run together in the order they came.
 *
 * Why: a decision the memory store makes at once would otherwise be acted on (headers, `next()`,
 * the handler, the response write) between reading one connection's request and the next, so
 * under concurrency each response goes out alone and wakes the client on its own. Held to the end
 * of the turn, the turn's responses leave together, as the kvstore path's do when one script reply
 * answers a turn's requests. The first request of a turn is never held, so a client alone (one
 * connection) pays nothing for it. Measured in BENCHMARKS.md (issue 17): the memory store's CPU per
 * request at 10 and 64 connections 9-15 % lower, the same at one connection.
 *
 * A job that throws is reported through `onError` and does not stop the jobs after it.
 */
export class TurnBurst {
  private open = false;
  private held: (() => void)[] = [];
  private readonly end = () => {
    this.open = false;
    const jobs = this.held;
    if (jobs.length === 0) return;
    this.held = [];
    for (const job of jobs) {
      try {
        job();
      } catch (err) {
        this.onError(err);
      }
    }
  };

  constructor(private readonly onError: (err: unknown) => void) {}

  /** Runs `job` now if it is the first of this turn, else at the end of the turn. */
  run(job: () => void): void {
    if (this.open) {
      this.held.push(job);
      return;
    }
    this.open = true;
    setImmediate(this.end);
    job();
  }
}
