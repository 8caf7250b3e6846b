import type { Redis } from 'ioredis';
import type { Clock } from '../lib/clock';
import { parseBatchReply, type Recover } from './decision-batch';
import { probeScript, type LuaScript } from './lua/script';
import { ScriptRunner } from './script-runner';
import type { TierPlan } from './tiers';
import type { Decision, DecisionStore } from './types';

export { MAX_BATCH } from './script-runner';

/**
 * The kvstore store: every tier of a request decided and written atomically by one Lua script
 * call, timed by Redis `TIME` so every replica reads one clock. Errors (timeouts, a closed
 * connection) reject, or resolve with the `recover` decision when the caller gives one (the
 * failover store: its memory decision, without a promise layer of its own).
 *
 * Requests are batched per event-loop turn: the decisions asked for while one turn's I/O is read
 * (one per request, all tiers each) go out in one `EVALSHA` per tier plan when the turn ends
 * (`setImmediate`), at most `MAX_BATCH` per call. The script decides them one after another, each
 * exactly as if it were sent alone, so semantics do not change: every request still waits for
 * exactly one round trip, and one alone in its turn is one `EVALSHA` of its own. Under concurrency
 * the per-command costs (a command's parsing and dispatch in Redis, one `TIME`, the reads and
 * writes of the shared global key, a reply and a syscall in Node) are shared by the whole turn.
 *
 * The request path is as short as the floor's (one `EVALSHA` through ioredis). Scripts, batches,
 * the `EVAL` fallback on NOSCRIPT and the one timer for all batches in flight are the script
 * runner's (script-runner.ts), shared with the cluster store.
 */
export class RedisDecisionStore implements DecisionStore {
  private readonly runner: ScriptRunner<TierPlan>;

  /**
   * @param clock  Only for tests: sends the given clock's time instead of letting Redis read
   *   `TIME`, so decisions can be compared with the memory store step by step. Leave unset.
   * @param maxBatch  Most requests per script call. @default MAX_BATCH
   */
  constructor(client: Redis, clock?: Clock, maxBatch?: number) {
    this.runner = new ScriptRunner(client, { clock, maxBatch });
  }

  /** Decides a request; rejects with the command's error unless `recover` decides it instead. */
  decide(plan: TierPlan, keys: readonly string[], recover?: Recover): Promise<Decision> {
    return this.runner.decide(plan, plan, keys, recover);
  }

  /** One cheap round trip through the real path (script cache, `TIME`), writing nothing. */
  async probe(): Promise<void> {
    parseBatchReply(await this.runner.run(probeScript, ['', 0, '']), 0, 0);
  }

  /** The plan's script (its limits are constants in the source). */
  scriptOf(plan: TierPlan): LuaScript {
    return this.runner.scriptOf(plan);
  }

  /** Stops the deadline timer. */
  close(): void {
    this.runner.close();
  }
}
