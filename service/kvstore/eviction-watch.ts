import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { EvictionStatus } from '../http/contract/ops';
import type { RedisClient } from './client-factory';
import {
  ACCEPT_EVICTION_VARIABLE,
  evictionProblem,
  KvstoreEvictionError,
  policyEffect,
  readEvictedKeys,
  readStorePolicy,
  type MemoryPolicy,
} from './eviction-policy';

/**
 * What the store's `maxmemory-policy` means for this service: `unchecked` (not read yet: never
 * connected), `none` (it never evicts keys without a TTL), `accepted` (it may evict the content
 * keys and `KVSTORE_ACCEPT_EVICTION=true` accepts that), `evicts` (it may, unaccepted: for the
 * content store only after a change at run time, since at start it is an error; for the rate
 * limiter's own store a warning), `unknown` (neither CONFIG GET nor INFO memory answered).
 */
export type PolicyRisk = 'unchecked' | 'none' | 'accepted' | 'evicts' | 'unknown';

/** Options of `EvictionWatch`. */
export interface EvictionWatchOptions {
  readonly logger: Logger;
  /** Content lives in this store: an evicting policy refuses the start (and, changed later, writes). */
  readonly holdsContent: boolean;
  /** `KVSTORE_ACCEPT_EVICTION`. @default false */
  readonly accept?: boolean;
  /**
   * How long health stays degraded after the last eviction seen in a store that holds content,
   * ms. @default 300000 (five minutes: an alert's evaluation, and long enough to be noticed)
   */
  readonly holdMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * Watches one store's memory policy and evictions: reads `maxmemory-policy` at start (`atStart`:
 * the refusal), again on every reconnect and every poll (`check`: a policy changed with CONFIG SET
 * is seen within one poll), and `evicted_keys` on every poll. Emits `evicted` (with the number of
 * keys, and whether the content keys may be among them) when it rises, so the content store
 * reloads and writes back what it lost.
 */
export class EvictionWatch extends EventEmitter {
  private read: MemoryPolicy | undefined;
  private current: PolicyRisk = 'unchecked';
  private baseline: { total: number; runIds: string } | undefined;
  private evicted = 0;
  private lastEvictionAt: number | undefined;
  /** The last eviction seen while the policy could evict the content keys (`contentAtRisk`). */
  private lastContentRiskAt: number | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: EvictionWatchOptions) {
    super();
    this.now = opts.now ?? Date.now;
  }

  /** The current reading of the policy. */
  get risk(): PolicyRisk {
    return this.current;
  }

  /** Keys evicted since the watch began. */
  get evictedKeys(): number {
    return this.evicted;
  }

  /** True when content writes must be refused: content lives here and the policy evicts, unaccepted. */
  get refusesWrites(): boolean {
    return this.opts.holdsContent && this.current === 'evicts';
  }

  /** Why writes are refused (for the 503), when they are. */
  get refusal(): string | undefined {
    return this.refusesWrites && this.read ? evictionProblem(this.read) : undefined;
  }

  /**
   * True when content lives here and the policy may have evicted it: `accepted` or `evicts`, or
   * `unknown`. Under `none` (noeviction, volatile-*) only keys with a TTL go, never the content's.
   */
  get contentAtRisk(): boolean {
    return (
      this.opts.holdsContent && (this.current === 'accepted' || this.current === 'evicts' || this.current === 'unknown')
    );
  }

  /**
   * True when health must say degraded: content lives here and writes are refused, or keys were
   * evicted within `holdMs` while the policy could evict the content keys.
   */
  get degraded(): boolean {
    return this.opts.holdsContent && (this.refusesWrites || this.within(this.lastContentRiskAt));
  }

  /** True when `at` is within `holdMs` of now. */
  private within(at: number | undefined): boolean {
    return at !== undefined && this.now() - at < (this.opts.holdMs ?? 300_000);
  }

  /** The record `/health` shows. */
  get status(): EvictionStatus {
    return {
      policy: this.read?.policy ?? null,
      maxmemory_bytes: this.read?.maxmemory ?? null,
      policy_risk: this.current,
      evicted_keys: this.evicted,
      last_eviction_at: this.lastEvictionAt === undefined ? null : new Date(this.lastEvictionAt).toISOString(),
    };
  }

  /**
   * The check at start: throws `KvstoreEvictionError` when content lives in this store, its
   * policy may evict keys without a TTL, and `KVSTORE_ACCEPT_EVICTION` is not set. Also takes the
   * baseline of `evicted_keys`.
   */
  async atStart(c: RedisClient): Promise<void> {
    const p = await readStorePolicy(c);
    if (this.opts.holdsContent && !this.opts.accept && p.policy !== undefined && policyEffect(p.policy) === 'evicts') {
      throw new KvstoreEvictionError(`${evictionProblem(p)}; the service does not start with content in it`);
    }
    this.apply(p);
    await this.countEvictions(c);
  }

  /**
   * Re-reads the policy and `evicted_keys` (a poll, or a reconnect); never throws. A reading the
   * server did not answer (a timeout, a dropped connection) changes nothing: only a refusal
   * makes the policy `unknown`.
   */
  async check(c: RedisClient): Promise<void> {
    const p = await readStorePolicy(c);
    if (p.policy !== undefined || p.refused) this.apply(p);
    await this.countEvictions(c);
  }

  private riskOf(p: MemoryPolicy): PolicyRisk {
    if (p.policy === undefined) return 'unknown';
    if (policyEffect(p.policy) === 'none') return 'none';
    return this.opts.holdsContent && this.opts.accept ? 'accepted' : 'evicts';
  }

  /** Takes a reading, logging a change of what it means (once per change, not per poll). */
  private apply(p: MemoryPolicy): void {
    const prev = this.current;
    const next = this.riskOf(p);
    const changedPolicy = this.read?.policy !== p.policy;
    this.read = p;
    this.current = next;
    if (prev === next && !changedPolicy) return;
    const log = this.opts.logger;
    const fields = {
      maxmemory_policy: p.policy ?? null,
      maxmemory: p.maxmemory ?? null,
      where: p.where,
      read_by: p.source ?? null,
    };
    if (next === 'none') {
      if (prev === 'unchecked')
        log.info(fields, 'kvstore maxmemory-policy keeps keys without a TTL (the content keys have none)');
      else
        log.warn(
          fields,
          'kvstore maxmemory-policy no longer evicts keys without a TTL; content writes are accepted again',
        );
    } else if (next === 'unknown') {
      log.warn(
        { ...fields, err: p.error },
        'kvstore maxmemory-policy could not be read (CONFIG and INFO refused): whether Redis may evict the content keys is unknown; make sure it is noeviction or volatile-* (evictions are still watched where INFO answers)',
      );
    } else if (next === 'accepted') {
      log.warn(
        fields,
        `kvstore maxmemory-policy may evict the content keys; starting anyway because ${ACCEPT_EVICTION_VARIABLE}=true (the risk is shown in /health)`,
      );
    } else if (this.opts.holdsContent) {
      log.error(
        fields,
        `${evictionProblem(p)}; found after the start (changed at run time, or another server after a reconnect, or unreachable at start): content writes are refused with 503 and /health says degraded until it is fixed`,
      );
    } else {
      log.warn(
        fields,
        "the rate limiter's kvstore maxmemory-policy may evict keys without a TTL: limits held there can be reset by evictions when it is full (use noeviction or volatile-* to keep them)",
      );
    }
  }

  private async countEvictions(c: RedisClient): Promise<void> {
    const now = await readEvictedKeys(c);
    if (now === undefined) return;
    const prev = this.baseline;
    this.baseline = now;
    if (prev === undefined) return;
    // Another server process (a restart, a failover) counts from 0: all of its count is new. So
    // is a count that went down (CONFIG RESETSTAT); one reset and risen past the old count
    // between two polls cannot be told apart and is undercounted (docs/failure-behaviour.md).
    const delta = now.runIds !== prev.runIds || now.total < prev.total ? now.total : now.total - prev.total;
    if (delta <= 0) return;
    // One log line per episode of evictions (none within `holdMs` before), not one per poll.
    const first = !this.within(this.lastEvictionAt);
    const atRisk = this.contentAtRisk;
    this.evicted += delta;
    this.lastEvictionAt = this.now();
    if (atRisk) {
      if (!this.within(this.lastContentRiskAt)) {
        this.opts.logger.error(
          { evicted_keys: delta, maxmemory_policy: this.read?.policy ?? null },
          'the kvstore evicted keys (maxmemory reached): content keys may be lost; reloading and writing back what this replica holds, /health says degraded',
        );
      }
      this.lastContentRiskAt = this.lastEvictionAt;
    } else if (first) {
      this.opts.logger.warn(
        { evicted_keys: delta, maxmemory_policy: this.read?.policy ?? null },
        this.opts.holdsContent
          ? 'the kvstore evicted keys with a TTL (maxmemory reached): some rate limits may have been reset; the content keys carry no TTL and are kept'
          : "the rate limiter's kvstore evicted keys (maxmemory reached): some limits may have been reset",
      );
    }
    // The content store reloads only when content may be among them: under noeviction or
    // volatile-* a reload (every item read and parsed) would find nothing, at every poll.
    this.emit('evicted', delta, atRisk);
  }
}
