import { Command } from 'ioredis';
import type { KvstoreDurability } from '../../../configs';
import type { RedisClient } from '../../kvstore/client-factory';
import type { KvstoreConnection, WriteConfirmation } from '../../kvstore/connection';

/** WAITAOF's refusal on a primary without an append-only file (`numlocal is set but appendonly is disabled`). */
function aofDisabled(e: unknown): boolean {
  return e instanceof Error && /appendonly is disabled/i.test(e.message);
}

/**
 * How late a Redis server may answer a WAIT / WAITAOF whose own timeout has passed: it times
 * blocked clients out on its cron, `hz` 10 by default (every 100 ms). Measured on valkey 8.0
 * (Redis 7.2), a replica without an AOF: `WAITAOF 1 1 200` answered at 201–301 ms, `… 400` at 400–501 ms.
 */
const SERVER_TIMEOUT_LAG_MS = 100;

/**
 * The server-side wait of the probe and of the replica check: short, because WAIT blocks the
 * connection it runs on, and a write sent meanwhile on the write connection queues behind it
 * (with the write's own wait, up to 300 ms at the default timeout, a write could time out there).
 */
const SHORT_WAIT_MS = 20;

/**
 * Sends a WAIT or WAITAOF that waits `waitMs` on the server, with a client deadline of that wait,
 * the server's lag and the client's own command timeout (the allowance any reply gets). The
 * deadline is set on the command before it is sent, and ioredis arms a command's timer once, so the
 * client's shorter `commandTimeout` leaves it alone. With that timeout alone (250 ms by default,
 * the wait 80% of it) the server's answer came after it about half the time when the level was not
 * met, and the write's 503 said "Command timed out" instead of what the server counted.
 */
function sendWait(c: RedisClient, name: 'WAIT' | 'WAITAOF', args: number[], waitMs: number): Promise<unknown> {
  const options = c.options as { commandTimeout?: unknown; redisOptions?: { commandTimeout?: unknown } };
  const clientTimeout = options.commandTimeout ?? options.redisOptions?.commandTimeout;
  const command = new Command(name, args);
  if (typeof clientTimeout === 'number') command.setTimeout(waitMs + SERVER_TIMEOUT_LAG_MS + clientTimeout);
  return c.sendCommand(command) as Promise<unknown>;
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
  private readonly waitsInFlight = new WeakMap<
    RedisClient,
    Array<{ covers: number; waitMs: number; reply: Promise<number[]> }>
  >();

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
      return Number(await sendWait(c, 'WAIT', [1, SHORT_WAIT_MS], SHORT_WAIT_MS)) >= 1;
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
      this.durableWait(c, this.sent.get(c) ?? 0, SHORT_WAIT_MS).then(
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
    // Not the probe's short wait for a write's long one.
    const shared = inFlight.find((w) => w.covers >= seq && w.waitMs >= waitMs);
    if (shared) return shared.reply;
    const level = this.level;
    // Answered with counts once `waitMs` passes, before the client gives up on it (`sendWait`).
    const reply: Promise<number[]> =
      level === 'replica'
        ? sendWait(c, 'WAIT', [1, waitMs], waitMs).then((n) => [1, Number(n)])
        : sendWait(c, 'WAITAOF', [1, level === 'replica-disk' ? 1 : 0, waitMs], waitMs).then((r) =>
            (r as unknown[]).map(Number),
          );
    const entry = { covers: this.sent.get(c) ?? seq, waitMs, reply };
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
