/** What a deadline can fail: a batch in flight, settled by its reply or failed by its deadline. */
export interface Expirable {
  /** True once answered or failed: its deadline then no longer matters. */
  readonly settled: boolean;
  fail(err: unknown): void;
}

/** The message ioredis rejects a timed-out command with (kvstore/connection.ts `isCommandTimeout`). */
export const COMMAND_TIMED_OUT = 'Command timed out';

/**
 * Command timeouts for every command in flight on one connection with one timer, instead of
 * ioredis's `setTimeout` and `clearTimeout` per command. Items are tracked in the order they were
 * sent, so their deadlines come in order too; the timer fires at the oldest unsettled deadline,
 * fails every item past its own, and is armed again for the next one. Under steady traffic that
 * is one timer per timeout period, whatever the request rate.
 */
export class Deadlines {
  private items: Expirable[] = [];
  private due: number[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly sweep = () => {
    this.timer = undefined;
    const now = this.now();
    const { items, due } = this;
    let head = this.head;
    while (head < items.length) {
      const item = items[head];
      if (!item.settled) {
        if (due[head] > now) break;
        item.fail(new Error(COMMAND_TIMED_OUT));
      }
      head++;
    }
    if (head === items.length) {
      this.items = [];
      this.due = [];
      this.head = 0;
      return;
    }
    this.items = items.slice(head);
    this.due = due.slice(head);
    this.head = 0;
    this.arm(Math.max(1, this.due[0] - now));
  };

  /**
   * @param timeoutMs  How long an item may wait for its reply.
   * @param now  A monotonic clock, ms. @default performance.now
   */
  constructor(
    readonly timeoutMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Items tracked and not yet dropped (settled ones included until the next sweep). */
  get size(): number {
    return this.items.length - this.head;
  }

  /** Fails `item` with "Command timed out" unless it settles within `timeoutMs`. */
  track(item: Expirable): void {
    this.items.push(item);
    this.due.push(this.now() + this.timeoutMs);
    if (this.timer === undefined) this.arm(this.timeoutMs);
  }

  /** Stops the timer; items still tracked are left to their replies. */
  close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.sweep, ms);
    // A command in flight must not keep the process alive on its own.
    this.timer.unref();
  }
}
