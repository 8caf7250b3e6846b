/** Readiness of the process: starting until dependencies are loaded, draining after SIGTERM. */
export type LifecycleState = 'starting' | 'ready' | 'draining';

/** Holds the readiness state that `/health/ready` reports. */
export class Lifecycle {
  private current: LifecycleState;
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

  /** SIGTERM arrived; readiness goes 503 so load balancers stop sending. */
  markDraining(): void {
    this.current = 'draining';
  }
}
