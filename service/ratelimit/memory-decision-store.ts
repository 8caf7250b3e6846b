import { LRUCache } from 'lru-cache';
import type { Clock } from '../lib/clock';
import { admits, debtAt, stampAt } from './gcra';
import type { TierPlan } from './tiers';
import type { Decision, LocalDecisionStore } from './types';

/** One key's GCRA state (see gcra.ts), updated in place. */
interface Entry {
  t: number;
  debt: number;
}

/**
 * The in-process store: the same decisions as the Lua script, for a single replica. Keys live in
 * an LRU cache (lru-cache: a preallocated linked list, O(1) per access and eviction) capped at
 * `maxKeys`, so memory stays bounded however many clients come and go; there is no timer per key
 * and nothing is ever deleted: an entry whose bucket is full again reads as debt 0, exactly like
 * an expired Redis key, until it is reused or evicted as the oldest.
 *
 * Eviction forgets a client's debt early (it gets a full bucket back). With the cap far above the
 * number of clients active within one window, only an address-rotating flood evicts anything, and
 * then the least recently seen keys first: the ones most likely already drained. Every access,
 * refused ones included, refreshes a key, so a client hammering at its limit is never forgotten.
 */
export class MemoryDecisionStore implements LocalDecisionStore {
  private readonly entries: LRUCache<string, Entry>;
  private readonly found: (Entry | undefined)[] = [];

  constructor(
    private readonly clock: Clock,
    /** Most keys kept (`RATE_LIMIT_MEMORY_MAX_KEYS`). */
    readonly maxKeys: number,
  ) {
    this.entries = new LRUCache<string, Entry>({ max: maxKeys });
  }

  /** Keys held now (drained ones included until reused or evicted). */
  get size(): number {
    return this.entries.size;
  }

  /** Forgets everything (tests). */
  clear(): void {
    this.entries.clear();
  }

  /** The decision, synchronously (the failover store uses it when the kvstore fails mid-request). */
  decideAtOnce(plan: TierPlan, keys: readonly string[]): Decision {
    const now = this.clock.now();
    const tiers = plan.tiers;
    const n = tiers.length;
    const debts = new Array<number>(n);
    const found = this.found;
    let allowed = true;
    for (let i = 0; i < n; i++) {
      const entry = this.entries.get(keys[i]);
      found[i] = entry;
      debts[i] = debtAt(entry, now, tiers[i].gcra);
      if (!admits(debts[i], tiers[i].gcra)) allowed = false;
    }
    if (allowed) {
      for (let i = 0; i < n; i++) {
        const g = tiers[i].gcra;
        const entry = found[i];
        const t = stampAt(entry, now);
        const debt = debts[i] + g.windowMs;
        debts[i] = debt;
        if (entry !== undefined) {
          // Already the most recent: `get` above moved it.
          entry.t = t;
          entry.debt = debt;
        } else {
          this.entries.set(keys[i], { t, debt });
        }
      }
    }
    found.fill(undefined);
    return { allowed, now, debts };
  }

  decide(plan: TierPlan, keys: readonly string[]): Promise<Decision> {
    return Promise.resolve(this.decideAtOnce(plan, keys));
  }
}
