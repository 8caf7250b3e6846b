import type { Cluster } from 'ioredis';
import { parseBatchReply, type Recover } from './decision-batch';
import { probeScript } from './lua/script';
import { refundScript } from './lua/refund-script';
import { ScriptRunner } from './script-runner';
import { KEY_PREFIX, type TierPlan } from './tiers';
import type { Decision, DecisionStore } from './types';

/** Most requests one script call decides (a longer batch is sent at once and a new one begun). */
export const MAX_CLUSTER_BATCH = 256;

/** The global tier's key on a cluster: its own slot, the same name as on standalone. */
export const CLUSTER_GLOBAL_KEY = `${KEY_PREFIX}global`;

/**
 * The key of a client's tier on a Redis Cluster: the client id is the hash tag, so a client's ip
 * and endpoint tiers share one slot and are decided in one script call (`ratelimit:ip:{1.2.3.4}`,
 * `ratelimit:search:{1.2.3.4}`). Standalone keys (`ratelimit:ip:1.2.3.4`) are not touched.
 */
export function clusterClientKey(standaloneKey: string, tier: string): string {
  const prefix = `${KEY_PREFIX}${tier}:`;
  return `${prefix}{${standaloneKey.slice(prefix.length)}}`;
}

/** The batch id of the global steps (no client key contains it: theirs begin with a split's number). */
const GLOBAL_BATCH = 'global';

/** A plan split for the cluster: the client's tiers (one slot) and whether the global tier applies. */
interface SplitPlan {
  /** Names this plan's batches apart from another plan's (`<id>\u0000<client key>`). */
  readonly id: string;
  /** The client tiers of the plan, as a plan of their own (what the batch parses replies by). */
  readonly client: TierPlan;
  /** Index of the global tier in the original plan, or -1. */
  readonly globalAt: number;
  /** Tier names of the client part, in order (to build the cluster keys). */
  readonly names: readonly string[];
  /** Each client tier's charge per request (`windowMs` in GCRA units), for refunds. */
  readonly increments: readonly number[];
}

/**
 * Rate-limit decisions on a Redis Cluster, where one script cannot touch the global key and a
 * client's keys at once (CROSSSLOT). Per request:
 *
 * 1. the client's tiers (ip and the endpoint tier), in the client's slot, in one script call,
 *    exactly as on standalone: both admit and are charged, or nothing is;
 * 2. if admitted there, the global tier, in its own slot, in a second call (charged only if it
 *    admits);
 * 3. if the global tier refuses, the client's charge is refunded (a third call, not waited for).
 *
 * So nothing is ever admitted beyond any tier's limit; a refused request ends up charged nothing,
 * once the refund has run. Between steps 1 and 3 the client carries one charge too many, which can
 * refuse another request of the same client sent within that round trip (over-refusal, never
 * over-admission); a refund lost to a node failure leaves one charge that drains at the tier's rate.
 * See docs/rate-limiting.md.
 *
 * Batching by event-loop turn works per slot: the client steps of one turn go out as one call per
 * (plan, client), which ioredis pipelines per node (`enableAutoPipelining`), and the global steps
 * of one turn as one call for all of them. A refused-by-client request's global debt is not read
 * (reported as 0: the refusing tier decides the headers). Scripts, batches and the `EVAL`
 * fallback on NOSCRIPT (each master caches scripts on its own) are the script runner's
 * (script-runner.ts), shared with the standalone store.
 */
export class ClusterDecisionStore implements DecisionStore {
  private readonly splits = new WeakMap<TierPlan, SplitPlan>();
  private readonly runner: ScriptRunner<string>;
  private globalPlan: TierPlan | undefined;
  /** Split plans made so far (their batch ids). */
  private splitCount = 0;

  constructor(client: Cluster, maxBatch = MAX_CLUSTER_BATCH) {
    this.runner = new ScriptRunner<string>(client, { maxBatch });
  }

  /** Script calls sent (client, global and refund steps), for the round-trip figures. */
  get calls(): number {
    return this.runner.calls;
  }
  set calls(n: number) {
    this.runner.calls = n;
  }

  /**
   * Decides one request. When a step's command fails, `recover` (the failover store's memory
   * decision) answers instead of a rejection, as `RedisDecisionStore.decide` does.
   */
  decide(plan: TierPlan, keys: readonly string[], recover?: Recover): Promise<Decision> {
    const decided = this.decideSplit(plan, keys);
    return recover === undefined ? decided : decided.catch((err: unknown) => recover(err, plan, keys));
  }

  private decideSplit(plan: TierPlan, keys: readonly string[]): Promise<Decision> {
    const split = this.split(plan);
    const clientKeys = new Array<string>(split.names.length);
    for (let i = 0, j = 0; i < keys.length; i++) {
      if (i === split.globalAt) continue;
      clientKeys[j] = clusterClientKey(keys[i], split.names[j]);
      j++;
    }
    return this.enqueueClient(split.client, split.id, clientKeys).then((d) => {
      if (split.globalAt < 0) return d;
      if (!d.allowed) return withGlobal(d, split.globalAt, 0);
      return this.enqueueGlobal(plan.tiers[split.globalAt].gcra).then((g) => {
        if (g.allowed) return withGlobal(d, split.globalAt, g.debts[0]);
        this.refund(clientKeys, split.increments);
        const refunded = d.debts.map((debt, i) => Math.max(0, debt - split.increments[i]));
        return withGlobal({ allowed: false, now: g.now, debts: refunded }, split.globalAt, g.debts[0]);
      });
    });
  }

  /** One round trip to the global key's node (script cache, `TIME`), writing nothing. */
  async probe(): Promise<void> {
    // The zero-tier script with the global key: routed to that key's master, it writes nothing.
    parseBatchReply(await this.runner.run(probeScript, ['', 1, CLUSTER_GLOBAL_KEY, '']), 0, 0);
  }

  private split(plan: TierPlan): SplitPlan {
    let s = this.splits.get(plan);
    if (s === undefined) {
      const globalAt = plan.tiers.findIndex((t) => t.name === 'global');
      const tiers = plan.tiers.filter((t) => t.name !== 'global');
      s = {
        id: String(++this.splitCount),
        client: { endpoint: plan.endpoint, tiers, policy: plan.policy, keys: () => [] },
        globalAt,
        names: tiers.map((t) => t.name),
        increments: tiers.map((t) => t.gcra.windowMs),
      };
      this.splits.set(plan, s);
    }
    return s;
  }

  private enqueueClient(plan: TierPlan, id: string, keys: string[]): Promise<Decision> {
    // One batch per (plan, client): all its keys share the client's slot.
    return this.runner.decide(`${id}\u0000${keys[0]}`, plan, keys);
  }

  private enqueueGlobal(gcra: TierPlan['tiers'][number]['gcra']): Promise<Decision> {
    this.globalPlan ??= {
      endpoint: undefined,
      tiers: [
        { name: 'global', limits: { limit: gcra.limit, windowSeconds: gcra.windowMs / 1000, burst: gcra.burst }, gcra },
      ],
      policy: '',
      keys: () => [CLUSTER_GLOBAL_KEY],
    };
    return this.runner.decide(GLOBAL_BATCH, this.globalPlan, [CLUSTER_GLOBAL_KEY]);
  }

  /** Gives back one request's charge on each client key; best effort (a lost refund drains on its own). */
  private refund(keys: readonly string[], increments: readonly number[]): void {
    const args: (string | number)[] = ['', keys.length, ...keys, ...increments];
    this.runner.run(refundScript, args).catch(() => undefined);
  }
}

/** The decision of the whole plan: the client part's debts with the global debt put at its index. */
function withGlobal(d: Decision, globalAt: number, globalDebt: number): Decision {
  const debts = d.debts.slice();
  debts.splice(globalAt, 0, globalDebt);
  return { allowed: d.allowed, now: d.now, debts };
}
