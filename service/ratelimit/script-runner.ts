import { Command, type Cluster, type Redis } from 'ioredis';
import type { Clock } from '../lib/clock';
import { DecisionBatch, type Recover } from './decision-batch';
import { Deadlines } from './deadlines';
import { decideScript, type LuaScript } from './lua/script';
import type { TierPlan } from './tiers';
import type { Decision } from './types';

/** Most requests one script call decides (a longer batch is sent at once and a new one begun). */
export const MAX_BATCH = 256;

/** True for Redis's "script not in cache" reply (after `SCRIPT FLUSH`, a restart or a failover). */
export function isNoScriptError(err: unknown): boolean {
  return err instanceof Error && /^NOSCRIPT(?:\s|$)/.test(err.message);
}

/** An ioredis command without its own timeout timer: the runner's `Deadlines` times it instead. */
class UntimedCommand extends Command {
  override setTimeout(): void {}
}

/** Options of the script runner. */
export interface ScriptRunnerOptions {
  /** Most requests per script call. @default MAX_BATCH */
  readonly maxBatch?: number;
  /**
   * Only for tests: sends the given clock's time instead of letting Redis read `TIME`, so
   * decisions can be compared with the memory decision store step by step. Leave unset.
   */
  readonly clock?: Clock;
}

/**
 * How the kvstore decision stores (redis-decision-store.ts, cluster-decision-store.ts) run their
 * Lua scripts on one client, a standalone/Sentinel `Redis` or a `Cluster`:
 *
 * - **Scripts by hash.** Every call is `EVALSHA`; when Redis answers NOSCRIPT (a restart, a
 *   failover, `SCRIPT FLUSH`, a cluster master that never saw the script) the same call is
 *   repeated once as `EVAL`, which runs the script and caches it again: a flushed script costs
 *   one extra round trip once and never an error. The decision script of each tier plan is built
 *   on first use (its limits are constants in the source).
 * - **Batches per event-loop turn.** Requests queued while one turn's I/O is read go out in one
 *   script call per batch id when the turn ends (`setImmediate`), at most `maxBatch` per call;
 *   the script decides them one after another, each exactly as if it were sent alone (see
 *   decision-batch.ts and lua/script.ts).
 * - **One timer for all batches in flight.** When the client has a `commandTimeout` (standalone
 *   and Sentinel clients of kvstore/client-factory.ts), batches are sent as commands without
 *   ioredis's timer per command and timed by one `Deadlines` instead; a batch that times out is
 *   failed and not sent again as `EVAL`. A `Cluster` client keeps its nodes' own timeouts.
 *
 * Whatever goes wrong while sending, even a synchronous throw, fails that batch alone: nothing
 * waits forever.
 *
 * @typeParam Id  What batches are grouped by: the plan (standalone), or plan and client slot (cluster).
 */
export class ScriptRunner<Id = TierPlan> {
  /** Script calls sent (not counting an `EVAL` retry after NOSCRIPT), for the round-trip figures. */
  calls = 0;
  /** The decision script of each plan, built on first use. */
  private readonly scripts = new WeakMap<TierPlan, LuaScript>();
  /** Batches of this turn not yet sent, per batch id. */
  private readonly pending = new Map<Id, DecisionBatch>();
  /** Undefined when the client has no `commandTimeout`. */
  private readonly deadlines: Deadlines | undefined;
  private readonly maxBatch: number;
  private readonly clock: Clock | undefined;
  private flushScheduled = false;
  private readonly flush = () => {
    this.flushScheduled = false;
    for (const batch of this.pending.values()) this.send(batch);
    this.pending.clear();
  };

  constructor(
    private readonly client: Redis | Cluster,
    options: ScriptRunnerOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? MAX_BATCH;
    this.clock = options.clock;
    // A Cluster's options have no `commandTimeout` (its nodes' options do): ioredis times those.
    const timeoutMs = (client.options as { commandTimeout?: unknown } | undefined)?.commandTimeout;
    this.deadlines = typeof timeoutMs === 'number' ? new Deadlines(timeoutMs) : undefined;
  }

  /**
   * Decides a request in the batch `id` of this turn (one batch per id, all its requests of
   * `plan`); rejects with the command's error unless `recover` decides it instead.
   */
  decide(id: Id, plan: TierPlan, keys: readonly string[], recover?: Recover): Promise<Decision> {
    return new Promise<Decision>((resolve, reject) => {
      let batch = this.pending.get(id);
      if (batch === undefined || batch.plan !== plan) {
        // Another plan under the same id would be a caller's mistake: send its batch, never drop it.
        if (batch !== undefined) this.send(batch);
        batch = new DecisionBatch(plan);
        this.pending.set(id, batch);
      }
      batch.add(keys, resolve, reject, recover);
      if (batch.size >= this.maxBatch) {
        this.pending.delete(id);
        this.send(batch);
      } else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /**
   * Runs `script` once, now, outside any batch: `args` is `[slot, numKeys, ...keys, ...argv]`
   * and the runner writes the script's reference into `slot`, so the caller builds one array per
   * call and the fast path copies none. Timed by the client's own command timeout.
   */
  run(script: LuaScript, args: (string | number)[]): Promise<unknown> {
    this.calls++;
    args[0] = script.sha;
    return this.client.call('EVALSHA', args).then(undefined, (err: unknown) => {
      if (!isNoScriptError(err)) throw err;
      args[0] = script.source;
      return this.client.call('EVAL', args);
    });
  }

  /** The plan's decision script (its limits are constants in the source). */
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

  /** Sends a batch; whatever goes wrong, even a synchronous throw, fails that batch alone. */
  private send(batch: DecisionBatch): void {
    if (this.deadlines === undefined) {
      let reply: Promise<unknown>;
      try {
        reply = this.run(this.scriptOf(batch.plan), batch.args(this.now()));
      } catch (err) {
        batch.fail(err);
        return;
      }
      reply.then(
        (r) => batch.settle(r),
        (err: unknown) => batch.fail(err),
      );
      return;
    }
    try {
      this.calls++;
      const script = this.scriptOf(batch.plan);
      const args = batch.args(this.now());
      args[0] = script.sha;
      this.untimed('evalsha', args).then(
        (reply) => batch.settle(reply),
        (err: unknown) => {
          // Failed already (its deadline passed): it is not sent again.
          if (!isNoScriptError(err) || batch.settled) {
            batch.fail(err);
            return;
          }
          args[0] = script.source;
          this.untimed('eval', args).then(
            (reply) => batch.settle(reply),
            (e: unknown) => batch.fail(e),
          );
        },
      );
      this.deadlines.track(batch);
    } catch (err) {
      batch.fail(err);
    }
  }

  /** "" lets the script read Redis `TIME`. */
  private now(): string {
    return this.clock ? String(this.clock.now()) : '';
  }

  /** One command without ioredis's own timer: the runner's deadlines time it. */
  private untimed(name: 'evalsha' | 'eval', args: (string | number)[]): Promise<unknown> {
    const command = new UntimedCommand(name, args);
    void this.client.sendCommand(command);
    return command.promise;
  }
}
