import type { Clock } from '../../lib/clock';
import type { CompactionStatus } from '../content-store';
import type { Compaction } from './compaction';
import { errorCode } from './error-code';
import type { FileStoreState } from './store-state';

/** Backoff of compaction retries: 1 s, 2 s, 4 s, … doubling to at most 5 minutes between attempts. */
export const COMPACTION_RETRY = { initialMs: 1000, maxMs: 5 * 60_000 } as const;

/** What `CompactionRetries` needs (the store's options, defaults applied, and its queue). */
export interface CompactionRetriesOptions {
  readonly clock: Clock;
  /** The first retry `initialMs` after a failure, doubling per consecutive failure up to `maxMs`. */
  readonly retry: { readonly initialMs: number; readonly maxMs: number };
  /** Runs `fn` after every earlier write: one writer at a time (the store's queue). */
  readonly serial: <T>(fn: () => Promise<T>) => Promise<T>;
}

/**
 * When compaction runs and how it is doing: after a write that makes it due (in the store's
 * queue, never beside an append), and after a failure again by a timer with backoff
 * (`COMPACTION_RETRY`) until one succeeds; failures are logged and counted for `/health`.
 */
export class CompactionRetries {
  /** A compaction is in the queue. */
  private queued = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private consecutiveFailures = 0;
  private lastFailureAt: number | undefined;
  private lastError: string | undefined;
  private nextRetryAt: number | undefined;

  constructor(
    private readonly s: FileStoreState,
    private readonly compaction: Compaction,
    private readonly opts: CompactionRetriesOptions,
  ) {}

  /**
   * After a write, not inside it: its record is durable, so it resolves whatever the compaction
   * does. While a failed compaction waits for its retry, writes do not start another one.
   */
  afterWrite(): void {
    if (this.compaction.due() && !this.queued && !this.retryTimer) {
      this.queued = true;
      void this.opts.serial(() => this.run());
    }
  }

  /**
   * Compacts if still due, or finishes the clean-up of one that switched generations; never
   * throws: a failure is recorded and retried. Runs in the queue (or in `load`).
   */
  async run(): Promise<void> {
    this.queued = false;
    if (!this.s.log || this.s.broken || !(this.compaction.due() || this.compaction.cleanupWanted)) return;
    try {
      if (this.compaction.due()) await this.compaction.compact();
      else await this.compaction.cleanUp();
    } catch (e) {
      this.failed(e);
      return;
    }
    if (this.consecutiveFailures > 0) {
      this.s.logger.info(
        { generation: this.s.gen, failedAttempts: this.consecutiveFailures },
        'content store compaction succeeded again',
      );
    }
    this.consecutiveFailures = 0;
    this.nextRetryAt = undefined;
  }

  private failed(e: unknown): void {
    this.failures++;
    this.consecutiveFailures++;
    this.lastFailureAt = this.opts.clock.now();
    this.lastError = errorCode(e);
    if (this.s.broken) {
      this.nextRetryAt = undefined;
      return;
    }
    const retry = this.opts.retry;
    const delay = Math.min(retry.maxMs, retry.initialMs * 2 ** Math.min(30, this.consecutiveFailures - 1));
    this.nextRetryAt = this.lastFailureAt + delay;
    this.s.logger.error(
      {
        err: { code: this.lastError, message: (e as Error | null)?.message },
        dir: this.s.dir,
        generation: this.s.gen,
        logBytes: this.s.logBytes,
        failures: this.failures,
        retryInMs: delay,
      },
      'content store compaction failed; writes go on into the current log (nothing is lost) and the compaction is retried',
    );
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.queued = true;
      void this.opts.serial(() => this.run());
    }, delay);
    this.retryTimer.unref();
  }

  /** How compaction is doing, for `/health` and the failure counter. */
  status(): CompactionStatus {
    return {
      state: this.consecutiveFailures > 0 ? 'failing' : 'ok',
      failures: this.failures,
      ...(this.lastFailureAt !== undefined ? { lastFailureAt: this.lastFailureAt } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      ...(this.consecutiveFailures > 0 && this.nextRetryAt !== undefined ? { nextRetryAt: this.nextRetryAt } : {}),
    };
  }

  /** Cancels a waiting retry (the store closes). */
  stop(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }
}
