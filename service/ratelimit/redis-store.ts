import { Command, type Redis } from 'ioredis';
import type { Clock } from '../clock';
import { DecisionBatch, parseBatchReply, type Recover } from './decision-batch';
import { Deadlines } from './deadlines';
import { decideScript, isNoScriptError, probeScript, type LuaScript } from './lua/script';
import type { TierPlan } from './tiers';
import type { Decision, DecisionStore } from './types';

/** Most requests one script call decides (a longer batch is sent at once and a new one begun). */
export const MAX_BATCH = 256;

/** An ioredis command without its own timeout timer: the store's `Deadlines` times it instead. */
class UntimedCommand extends Command {
  override setTimeout(): void {}
}

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
 * The request path is as short as the floor's (one `EVALSHA` through ioredis): the batch is sent
 * with `sendCommand` and settled straight from the command's promise, falling back to `EVAL` on
 * NOSCRIPT; the client's `commandTimeout` is kept by one timer for all batches in flight
 * (deadlines.ts), not by a timer per command.
 */
export class RedisStore implements DecisionStore {
  /** The decision script of each plan, built on first use. */
  private readonly scripts = new WeakMap<TierPlan, LuaScript>();
  /** Batches of this turn not yet sent, per plan. */
  private readonly pending = new Map<TierPlan, DecisionBatch>();
  /** Undefined when the client has no `commandTimeout` (nor a store-side one). */
  private readonly deadlines: Deadlines | undefined;
  private flushScheduled = false;
  private readonly flush = () => {
    this.flushScheduled = false;
    for (const batch of this.pending.values()) this.send(batch);
    this.pending.clear();
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
  ) {
    const timeoutMs = (client.options as Redis['options'] | undefined)?.commandTimeout;
    this.deadlines = typeof timeoutMs === 'number' ? new Deadlines(timeoutMs) : undefined;
  }

  /** Decides a request; rejects with the command's error unless `recover` decides it instead. */
  decide(plan: TierPlan, keys: readonly string[], recover?: Recover): Promise<Decision> {
    return new Promise<Decision>((resolve, reject) => {
      let batch = this.pending.get(plan);
      if (batch === undefined) {
        batch = new DecisionBatch(plan);
        this.pending.set(plan, batch);
      }
      batch.add(keys, resolve, reject, recover);
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

  /** Stops the deadline timer. */
  close(): void {
    this.deadlines?.close();
  }

  /** Sends a batch; whatever goes wrong, even a synchronous throw, fails that batch alone: nothing waits forever. */
  private send(batch: DecisionBatch): void {
    try {
      const script = this.scriptOf(batch.plan);
      const args = batch.args(this.clock ? String(this.clock.now()) : '');
      args[0] = script.sha;
      this.command('evalsha', args).then(
        (reply) => batch.settle(reply),
        (err: unknown) => {
          if (!isNoScriptError(err) || batch.settled) {
            batch.fail(err);
            return;
          }
          // Flushed from the script cache (restart, failover, SCRIPT FLUSH): EVAL runs and caches it again.
          args[0] = script.source;
          this.command('eval', args).then(
            (reply) => batch.settle(reply),
            (e: unknown) => batch.fail(e),
          );
        },
      );
      this.deadlines?.track(batch);
    } catch (err) {
      batch.fail(err);
    }
  }

  /** One command; timed by the store's deadlines when the client has a command timeout. */
  private command(name: 'evalsha' | 'eval', args: (string | number)[]): Promise<unknown> {
    if (this.deadlines === undefined) return this.client.call(name, args);
    const command = new UntimedCommand(name, args);
    void this.client.sendCommand(command);
    return command.promise;
  }
}
