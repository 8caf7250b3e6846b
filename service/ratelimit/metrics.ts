import { Counter, Gauge, type Registry } from 'prom-client';
import { LeanHistogram } from '../metrics/lean-histogram';
import { TIER_NAMES, type TierName } from '../../configs';
import { METRIC_FAMILIES as F } from '../../contract';
import type { RateLimitBackend } from './types';

/** Buckets of the decision histogram: 50 µs to 1 s (a kvstore decision is ~0.1-1 ms, a timeout 250 ms). */
export const DECISION_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/**
 * The rate-limit metrics on an injected registry. The per-request counters count into a plain
 * array and hand the increments to prom-client at scrape time (no label hashing on the hot path);
 * every tier × result series exists from the start, at 0.
 */
export class RateLimitMetrics {
  /** [tier index × 3 + 0: allowed, 1: refused, 2: near limit] since the last scrape. */
  private readonly pending = new Float64Array(TIER_NAMES.length * 3);
  private readonly tierIndex = new Map<TierName, number>(TIER_NAMES.map((t, i) => [t, i]));
  private readonly errors: Counter;
  private readonly durations: Record<RateLimitBackend, { observe(v: number): void }>;

  constructor(registry: Registry, backend: () => RateLimitBackend) {
    const pending = this.pending;
    /** Moves pending counts of `slot` into `counter` (called by each counter's collect). */
    const drain = (slot: number, add: (tier: TierName, n: number) => void) => {
      TIER_NAMES.forEach((tier, i) => {
        const n = pending[i * 3 + slot];
        if (n > 0) add(tier, n);
        pending[i * 3 + slot] = 0;
      });
    };
    const requests = new Counter({
      name: F.rateLimitRequestsTotal.name,
      help: "Rate-limit decisions: one per applicable tier per request, result = that tier's verdict (allowed | refused)",
      labelNames: F.rateLimitRequestsTotal.labels,
      registers: [registry],
      collect() {
        drain(0, (tier, n) => this.inc({ tier, result: 'allowed' }, n));
        drain(1, (tier, n) => this.inc({ tier, result: 'refused' }, n));
      },
    });
    const near = new Counter({
      name: F.rateLimitNearLimitTotal.name,
      help: 'Admitted requests that left a tier at or above the alert threshold (used / burst >= RATE_LIMIT_ALERT_THRESHOLD)',
      labelNames: F.rateLimitNearLimitTotal.labels,
      registers: [registry],
      collect() {
        drain(2, (tier, n) => this.inc({ tier }, n));
      },
    });
    for (const tier of TIER_NAMES) {
      requests.inc({ tier, result: 'allowed' }, 0);
      requests.inc({ tier, result: 'refused' }, 0);
      near.inc({ tier }, 0);
    }
    this.errors = new Counter({
      name: F.rateLimitStoreErrorsTotal.name,
      help: 'Failed rate-limit kvstore commands (the request was decided by the in-memory store instead)',
      registers: [registry],
    });
    new Gauge({
      name: F.rateLimitBackend.name,
      help: 'Rate-limit backend in use: 1 for the current one (kvstore | memory), 0 for the other',
      labelNames: F.rateLimitBackend.labels,
      registers: [registry],
      collect() {
        const now = backend();
        this.set({ backend: 'kvstore' }, now === 'kvstore' ? 1 : 0);
        this.set({ backend: 'memory' }, now === 'memory' ? 1 : 0);
      },
    });
    const decision = new LeanHistogram({
      name: F.rateLimitDecision.name,
      help: 'Time to decide a request against all its tiers, seconds, by backend',
      labelNames: F.rateLimitDecision.labels,
      buckets: DECISION_BUCKETS,
      registers: [registry],
    });
    this.durations = {
      kvstore: decision.labels({ backend: 'kvstore' }),
      memory: decision.labels({ backend: 'memory' }),
    };
  }

  /** Counts one tier's verdict. */
  verdict(tier: TierName, admitted: boolean): void {
    this.pending[this.tierIndex.get(tier)! * 3 + (admitted ? 0 : 1)] += 1;
  }

  /** Counts an admitted request that left `tier` near its limit. */
  nearLimit(tier: TierName): void {
    this.pending[this.tierIndex.get(tier)! * 3 + 2] += 1;
  }

  /** Counts a failed kvstore command. */
  storeError(): void {
    this.errors.inc();
  }

  /** Records how long a decision took. */
  decided(backend: RateLimitBackend, seconds: number): void {
    this.durations[backend].observe(seconds);
  }
}
