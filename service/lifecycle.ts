/** Readiness of the process: starting until dependencies are loaded, draining after SIGTERM. */
export type LifecycleState = 'starting' | 'ready' | 'draining';

/** Holds the readiness state that `/health/ready` reports. */
export class Lifecycle {
  private current: LifecycleState;
  private drainedFrom: number | undefined;
  readonly startedAt: number;

  constructor(now: number, initial: LifecycleState = 'starting') {
    this.startedAt = now;
    this.current = initial;
  }

  get state(): LifecycleState {
    return this.current;
  }

  /** Dependencies are loaded; traffic may come. */
  markReady(): void {
    if (this.current === 'starting') this.current = 'ready';
  }

  /** When the drain began (`markDraining`), milliseconds since the epoch; undefined before. */
  get drainingSince(): number | undefined {
    return this.drainedFrom;
  }

  /**
   * SIGTERM arrived (at `now`); readiness goes 503 so load balancers stop sending. The time
   * bounds what the stop may still do (`segmentPersistWindowMs`).
   */
  markDraining(now?: number): void {
    this.current = 'draining';
    this.drainedFrom ??= now;
  }
}
