import type { KvstoreDurability } from '../../../configs';
import type { RedisClient } from '../../kvstore/client-factory';
import type { KvstoreConnection, WriteConfirmation } from '../../kvstore/connection';

/** WAITAOF's refusal on a primary without an append-only file (`numlocal is set but appendonly is disabled`). */
function aofDisabled(e: unknown): boolean {
  return e instanceof Error && /appendonly is disabled/i.test(e.message);
}

/**
 * The waits that make a Redis content write durable at `KVSTORE_DURABILITY` (redis-content-store.ts
 * sends the write, numbers it here, and asks `confirm`): WAIT / WAITAOF on the write's connection,
 * shared by concurrent writes, and while the level is not met a probe that tells the connection
 * (and `/health`) when it is again.
 */
export class DurableWrites {
  private probe: NodeJS.Timeout | undefined;
  private closed = false;
  /** Writes sent per write connection, and the waits in flight on it with the last write each covers. */
  private readonly sent = new WeakMap<RedisClient, number>();
  private readonly waitsInFlight = new WeakMap<RedisClient, Array<{ covers: number; reply: Promise<number[]> }>>();

  constructor(
    private readonly level: KvstoreDurability,
    private readonly connection: KvstoreConnection,
    /** How long one WAIT / WAITAOF waits, milliseconds (below the command timeout). */
    private readonly waitMs: number,
    /** Reports a failed wait to the connection (the store's own rule: timeouts are not reported). */
    private readonly reportFailure: (e: unknown) => void,
  ) {}

  /** Numbers a write about to be sent on `c`: the number `confirm` waits for. */
  numberWrite(c: RedisClient): number {
    const seq = (this.sent.get(c) ?? 0) + 1;
    this.sent.set(c, seq);
    return seq;
  }

  /** Stops the probe. */
  close(): void {
    this.closed = true;
    if (this.probe) clearInterval(this.probe);
  }

  /**
   * Waits until write number `seq` made on `c` meets the durability level: undefined once it does,
   * else why not. The store answers a write whose level was not met in time like any unconfirmed
   * write (503, "may or may not have been stored; retrying is safe"), and the connection reports
   * why (no replica, not on disk) for `/health`: while a level cannot be met, content cannot be
   * written, by design.
   */
  async confirm(c: RedisClient, seq: number): Promise<string | undefined> {
    const level = this.level;
    if (level === 'primary') return undefined;
    const waitMs = this.waitMs;
    let local: number;
    let replicas: number;
    try {
      [local, replicas] = await this.durableWait(c, seq, waitMs);
    } catch (e) {
      if (!aofDisabled(e)) {
        this.reportFailure(e);
        return `${level === 'replica' ? 'WAIT' : 'WAITAOF'} for KVSTORE_DURABILITY=${level} failed: ${(e as Error).message}`;
      }
      // The primary answers, without an append-only file (CONFIG SET appendonly no): not on disk.
      [local, replicas] = [0, 0];
    }
    let problem: WriteConfirmation = 'ok';
    let where = 'the primary';
    if (local < 1) problem = 'not_on_disk';
    else if ((level === 'replica' || level === 'replica-disk') && replicas < 1) {
      // WAITAOF counts replicas that fsynced it: one that holds it in memory (no AOF, or one
      // fsynced only every second) is a disk problem of the replica's, not a missing replica.
      problem = level === 'replica-disk' && (await this.replicaHolds(c)) ? 'not_on_disk' : 'no_replica';
      where = 'a replica';
    }
    this.connection.writeConfirmation(problem, level);
    if (problem !== 'ok') this.probeDurability(c);
    if (problem === 'no_replica')
      return `no replica to confirm the write within ${waitMs} ms (KVSTORE_DURABILITY=${level}): the primary holds it, a failover may lose it`;
    if (problem === 'not_on_disk')
      return `${where} did not confirm it on disk within ${waitMs} ms (KVSTORE_DURABILITY=${level})`;
    return undefined;
  }

  /** True when a replica acknowledged the last write of `c` in memory (`WAIT 1` with a short timeout); false when unknown. */
  private async replicaHolds(c: RedisClient): Promise<boolean> {
    try {
      return Number(await c.call('WAIT', 1, 20)) >= 1;
    } catch {
      return false;
    }
  }

  /**
   * While the level is not met, asks again every 500 ms without writing (a WAIT on the write
   * connection counts the replicas that hold its last write), so `/health` says when writes can
   * be confirmed again even if none is sent.
   */
  private probeDurability(c: RedisClient): void {
    if (this.probe || this.closed) return;
    this.probe = setInterval(() => {
      if (this.connection.writes === 'ok' || this.closed || c.status !== 'ready') {
        if (this.connection.writes === 'ok' || this.closed) {
          clearInterval(this.probe);
          this.probe = undefined;
        }
        return;
      }
      this.durableWait(c, this.sent.get(c) ?? 0, this.waitMs).then(
        ([local, replicas]) => {
          const needsReplica = this.level === 'replica' || this.level === 'replica-disk';
          if (local >= 1 && (!needsReplica || replicas >= 1)) this.connection.writeConfirmation('ok', this.level);
        },
        () => undefined,
      );
    }, 500);
    this.probe.unref();
  }

  /**
   * One WAIT (or WAITAOF) on `c` that covers write number `seq` of that connection: one sent
   * after it is still waiting (it counts every earlier write of the connection, so concurrent
   * writes share one wait and never queue one wait each), or a new one. Resolves with [copies
   * on the primary's disk, replicas].
   */
  private durableWait(c: RedisClient, seq: number, waitMs: number): Promise<number[]> {
    const inFlight = this.waitsInFlight.get(c) ?? [];
    const shared = inFlight.find((w) => w.covers >= seq);
    if (shared) return shared.reply;
    const level = this.level;
    // Below the command timeout, so the wait answers (with counts) before the client gives up on it.
    const reply: Promise<number[]> =
      level === 'replica'
        ? c.call('WAIT', 1, waitMs).then((n) => [1, Number(n)])
        : c.call('WAITAOF', 1, level === 'replica-disk' ? 1 : 0, waitMs).then((r) => (r as unknown[]).map(Number));
    const entry = { covers: this.sent.get(c) ?? seq, reply };
    inFlight.push(entry);
    this.waitsInFlight.set(c, inFlight);
    const done = () => {
      const i = inFlight.indexOf(entry);
      if (i >= 0) inFlight.splice(i, 1);
    };
    reply.then(done, done);
    return reply;
  }
}
