/** Time source, injected so tests control it. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private ms = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.ms;
  }
  /** Moves time forward. */
  advance(ms: number): void {
    this.ms += ms;
  }
  /** Jumps to an absolute time. */
  set(ms: number): void {
    this.ms = ms;
  }
}
