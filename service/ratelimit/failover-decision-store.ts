import type { Logger } from 'pino';
import type { Clock } from '../lib/clock';
import type { KvstoreState } from '../kvstore/connection';
import type { Recover } from './decision-batch';
import type { TierPlan } from './tiers';
import type { Decision, DecisionStore, LocalDecisionStore, RateLimitBackend } from './types';

/** What the failover decision store needs of the rate limiter's kvstore connection (a KvstoreConnection): state and `up`/`down` events. */
export interface RateLimitKvstore {
  readonly available: boolean;
  readonly state: KvstoreState;
  on(event: 'up' | 'down', listener: () => void): unknown;
  off(event: 'up' | 'down', listener: () => void): unknown;
}

/**
 * The shared decision store (RedisDecisionStore or ClusterDecisionStore): decisions that, when its command fails, resolve with what
 * `recover` decides instead of rejecting; a cheap probe; and `close` for its timers.
 */
export interface SharedDecisionStore extends DecisionStore {
  decide(plan: TierPlan, keys: readonly string[], recover?: Recover): Promise<Decision>;
  probe(): Promise<void>;
  close?(): void;
}

/** Options of the failover decision store. */
export interface FailoverOptions {
  /** How often a failing-but-connected kvstore is probed while requests use memory, ms. @default 1000 */
  readonly probeIntervalMs?: number;
  /** Called on every kvstore error (the store-error counter). */
  readonly onStoreError?: (err: unknown) => void;
}

/**
 * Uses the kvstore's decision store while it works and the memory decision store otherwise, explicitly (the analogue of
 * express-rate-limit's `passOnStoreError`, except that requests stay limited, per replica):
 *
 * - no store URL: memory, always;
 * - connection down (at startup or later): memory at once, no command is even tried (the
 *   connection has no offline queue), and back to the kvstore on the connection's `up` event;
 * - connection up but a command fails (timeout of a hung server, READONLY, OOM...): that request
 *   is decided by memory, later ones go straight to memory, and a background probe (one
 *   round trip per `probeIntervalMs`, through the real script) switches back when it succeeds.
 *
 * One warning when an outage starts and one line when it ends, never one per request.
 */
export class FailoverDecisionStore implements DecisionStore {
  private tripped = false;
  /** The last failed command's error (the requests of a batch all reject with the same one). */
  private lastError: unknown;
  private outageSince: number | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly probeIntervalMs: number;
  private readonly onUp = () => {
    this.tripped = false;
    this.stopProbe();
    this.sync('kvstore connection is back');
  };
  private readonly onDown = () => this.sync('kvstore connection lost or refused');
  /** A failed kvstore command's requests are decided by memory, in the same promise. */
  private readonly recover: Recover = (err, plan, keys) => {
    this.failed(err);
    return this.memory.decideAtOnce(plan, keys);
  };

  constructor(
    private readonly connection: RateLimitKvstore,
    private readonly redis: SharedDecisionStore | undefined,
    private readonly memory: LocalDecisionStore,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly options: FailoverOptions = {},
  ) {
    this.probeIntervalMs = options.probeIntervalMs ?? 1000;
    if (redis) {
      connection.on('up', this.onUp);
      connection.on('down', this.onDown);
    }
  }

  /** The backend requests are decided by right now. */
  backend(): RateLimitBackend {
    return this.redis !== undefined && this.connection.available && !this.tripped ? 'kvstore' : 'memory';
  }

  /** The memory store's decision while it is the backend (no I/O, no promise); undefined while the kvstore is. */
  decideAtOnce(plan: TierPlan, keys: readonly string[]): Decision | undefined {
    return this.backend() === 'memory' ? this.memory.decideAtOnce(plan, keys) : undefined;
  }

  decide(plan: TierPlan, keys: readonly string[]): Promise<Decision> {
    if (this.backend() === 'memory') return this.memory.decide(plan, keys);
    return this.redis!.decide(plan, keys, this.recover);
  }

  /** Stops probing and listening. */
  close(): void {
    this.closed = true;
    this.stopProbe();
    this.redis?.close?.();
    this.connection.off('up', this.onUp);
    this.connection.off('down', this.onDown);
  }

  private failed(err: unknown): void {
    // The requests of one batch share one command and so one error: count and log it once.
    if (err === this.lastError) return;
    this.lastError = err;
    this.options.onStoreError?.(err);
    this.logger.debug({ err: err instanceof Error ? err.message : String(err) }, 'rate-limit kvstore command failed');
    if (this.tripped || !this.connection.available) return;
    this.tripped = true;
    this.sync(`kvstore command failed: ${err instanceof Error ? err.message : String(err)}`);
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    if (this.closed || this.probeTimer) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      this.probe();
    }, this.probeIntervalMs);
    this.probeTimer.unref();
  }

  private probe(): void {
    // A lost connection untrips on its own `up` event; until then there is nothing to probe.
    if (!this.tripped || this.closed || !this.connection.available) return;
    this.redis!.probe().then(
      () => {
        if (!this.tripped) return;
        this.tripped = false;
        this.sync('kvstore answers again');
      },
      (err: unknown) => {
        this.options.onStoreError?.(err);
        this.scheduleProbe();
      },
    );
  }

  private stopProbe(): void {
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
  }

  /** Logs the start and the end of an outage, once each. */
  private sync(reason: string): void {
    if (this.redis === undefined) return;
    const backend = this.backend();
    const now = this.clock.now();
    // While the first connection attempt is still running there is no outage yet.
    const outage = backend === 'memory' && this.connection.state !== 'connecting';
    if (outage && this.outageSince === undefined) {
      this.outageSince = now;
      this.logger.warn(
        { backend, reason },
        'rate limiting falls back to the in-memory store: limits now hold per replica until the kvstore returns',
      );
    } else if (!outage && backend === 'kvstore' && this.outageSince !== undefined) {
      this.logger.warn({ backend, reason, outage_ms: now - this.outageSince }, 'rate limiting is back on the kvstore');
      this.outageSince = undefined;
    }
  }
}
