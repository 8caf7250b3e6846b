import type Redis from 'ioredis';
import type { Clock } from '../clock';
import { DecisionBatch, parseBatchReply } from './decision-batch';
import { decideScript, probeScript, type LuaScript } from './lua/script';
import type { TierPlan } from './tiers';
import type { Decision, DecisionStore } from './types';

/** Most requests one script call decides (a longer batch is sent at once and a new one begun). */
export const MAX_BATCH = 256;

/**
 * The kvstore store: every tier of a request decided and written atomically by one Lua script
 * call, timed by Redis `TIME` so every replica reads one clock. Errors (timeouts, a closed
 * connection) reject; the failover store decides what then happens.
 *
 * Requests are batched per event-loop turn: the decisions asked for while one turn's I/O is read
 * (one per request, all tiers each) go out in one `EVALSHA` per tier plan when the turn ends
 * (`setImmediate`), at most `MAX_BATCH` per call. The script decides them one after another, each
 * exactly as if it were sent alone, so semantics do not change: every request still waits for
 * exactly one round trip, and one alone in its turn is one `EVALSHA` of its own. Under concurrency
 * the per-command costs (a command's parsing and dispatch in Redis, one `TIME`, the reads and
 * writes of the shared global key, a reply and a syscall in Node) are shared by the whole turn.
 */
export class RedisStore implements DecisionStore {
  /** The decision script of each plan, built on first use. */
  private readonly scripts = new WeakMap<TierPlan, LuaScript>();
  /** Batches of this turn not yet sent, per plan. */
  private readonly pending = new Map<TierPlan, DecisionBatch>();
  private flushScheduled = false;
  private readonly flush = () => {
    this.flushScheduled = false;
    const batches = [...this.pending.values()];
    this.pending.clear();
    for (const batch of batches) this.send(batch);
  };

  /**
   * @param clock  Only for tests: sends the given clock's time instead of letting Redis read
   *   `TIME`, so decisions can be compared with the memory store step by step. Leave unset.
   * @param maxBatch  Most requests per script call. @default MAX_BATCH
   */
  constructor(
    private readonly client: Redis,
    private readonly clock?: Clock,
    private readonly maxBatch = MAX_BATCH,
  ) {}

  decide(plan: TierPlan, keys: readonly string[]): Promise<Decision> {
    return new Promise<Decision>((resolve, reject) => {
      let batch = this.pending.get(plan);
      if (batch === undefined) {
        batch = new DecisionBatch(plan);
        this.pending.set(plan, batch);
      }
      batch.add(keys, resolve, reject);
      if (batch.size >= this.maxBatch) {
        this.pending.delete(plan);
        this.send(batch);
      } else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** One cheap round trip through the real path (script cache, `TIME`), writing nothing. */
  async probe(): Promise<void> {
    parseBatchReply(await probeScript.run(this.client, ['', 0, '']), 0, 0);
  }

  /** The plan's script (its limits are constants in the source). */
  scriptOf(plan: TierPlan): LuaScript {
    let script = this.scripts.get(plan);
    if (script === undefined) {
      script = decideScript(plan.tiers.map((t) => t.gcra));
      this.scripts.set(plan, script);
    }
    return script;
  }

  /** Sends a batch; whatever goes wrong, even a synchronous throw, fails that batch alone: nothing waits forever. */
  private send(batch: DecisionBatch): void {
    let reply: Promise<unknown>;
    try {
      reply = this.scriptOf(batch.plan).run(this.client, batch.args(this.clock ? String(this.clock.now()) : ''));
    } catch (err) {
      batch.fail(err);
      return;
    }
    reply.then(
      (r) => batch.settle(r),
      (err: unknown) => batch.fail(err),
    );
  }
}
