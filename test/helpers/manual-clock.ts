import type { Clock } from '../../service/lib/clock';

/** A clock tests move by hand (the service's own is `systemClock`, service/lib/clock.ts). */
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
