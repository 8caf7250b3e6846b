/** Hands the event loop to whatever is waiting (timers, I/O, other requests) before going on. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Cuts a long synchronous job into slices of about `sliceMs`: call `maybeYield()` between units of
 * work, and it yields to the event loop once the current slice has run that long.
 */
export class TimeSlicer {
  private started = performance.now();

  constructor(private readonly sliceMs: number) {}

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
