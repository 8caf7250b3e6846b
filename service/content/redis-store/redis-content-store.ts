import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { DEFAULT_KVSTORE, defaultDurability, type KvstoreDurability } from '../../../configs';
import type { RedisClient } from '../../kvstore/client-factory';
import { isCommandTimeout, type KvstoreConnection } from '../../kvstore/connection';
import { keySlot } from '../../kvstore/key-slot';
import { contentKeys, type ContentKeys } from './redis-keys';
import { CONTENT_SCRIPTS, runScript, scriptKeys } from './redis-scripts';
import { DurableWrites } from './durable-writes';
import { RecentDeletions } from './recent-deletions';
import { RedisVectorRecords } from './redis-vectors';
import type { Item } from '../item';
import { fromRecord, toRecord, type ItemRecord } from '../item-record';
import { packItem } from '../lazy-item';
import {
  StoreUnavailableError,
  type ContentStore,
  type RemoteChangeHandlers,
  type RestoreOutcome,
} from '../content-store';
import { systemClock, type Clock } from '../../lib/clock';
import { eventOrTimeout } from '../../lib/event-or-timeout';
import { stepper } from '../../lib/yield-to-loop';

/** Options of `RedisContentStore`. */
export interface RedisContentStoreOptions {
  readonly connection: KvstoreConnection;
  readonly logger: Logger;
  /** Key prefix (`KVSTORE_KEY_PREFIX`). @default DEFAULT_KVSTORE.keyPrefix ('svc-ai-search:content') */
  readonly prefix?: string;
  /** Approximate length the change stream is trimmed to. @default 10000 */
  readonly streamMaxLen?: number;
  /** How long one XREAD blocks, milliseconds. @default 5000 */
  readonly blockMs?: number;
  /** Pause after a failed read before trying again, milliseconds. @default 500 */
  readonly retryMs?: number;
  /** When a write is acknowledged (`KVSTORE_DURABILITY`). @default defaultDurability(connection.mode) */
  readonly durability?: KvstoreDurability;
  /**
   * How long a write waits for the write connection to finish connecting before it is refused
   * with 503 (the shared connection being up). @default 2000
   */
  readonly writerReadyWaitMs?: number;
  /**
   * How long a write waits for its durability level (WAIT / WAITAOF <ms>); keep it below the
   * command timeout. @default 200
   */
  readonly durabilityWaitMs?: number;
  /**
   * How long a deletion's tombstone is kept, in Redis and in this replica's memory: a replica
   * that missed a delete and comes back within it drops the item; after it, the tombstone is
   * compacted away. @default DEFAULT_TOMBSTONE_RETENTION_MS (7 days)
   */
  readonly tombstoneRetentionMs?: number;
  /** Deletions this replica remembers to write back after Redis lost them. @default 100000 */
  readonly rememberedDeletions?: number;
  /** Stamps deletions (the same clock as items' `updated_at`). @default systemClock */
  readonly clock?: Clock;
}

/** How long tombstones are kept (see `RedisContentStoreOptions.tombstoneRetentionMs`). */
export const DEFAULT_TOMBSTONE_RETENTION_MS = 7 * 24 * 3600 * 1000;

const SCAN_COUNT = 500;
/** Tombstones per `restoreDeletions` call. */
const DELETIONS_PER_CALL = 1000;
/** Unconfirmed writes remembered (oldest forgotten first): a write Redis never ran leaves no notice. */
const MAX_UNCONFIRMED = 1000;

/**
 * Content in Redis, shared by every replica:
 *
 * - `<prefix>:items`: one hash, field = item id, value = the item's record (its JSON plus the
 *   plain text of its body, item-record.ts).
 * - `<prefix>:changes`: a stream; every write adds `{ids, origin}` (and the deleted ids' stamps)
 *   in the same atomic step as the data, so no replica sees the data without the notice or the
 *   notice without the data.
 * - `<prefix>:epoch`: a random marker set (NX) by the first load; it vanishes with the data.
 * - `<prefix>:deleted`, `<prefix>:revived`: sorted sets of tombstones and of deletions a later
 *   write superseded (redis-scripts.ts), each kept for the tombstone retention.
 *
 * Every replica reads the stream with XREAD BLOCK on its own duplicate connection and re-reads
 * the changed ids (a stream, unlike pub/sub, keeps entries while a reader reconnects). After any
 * read failure the replica resyncs in full (HSCAN), since entries may have been trimmed. Between
 * reads (at most every `blockMs`) it checks the epoch marker: a missing or different marker means
 * Redis lost its data without dropping the connection (FLUSHALL, a failover to an empty copy),
 * which is logged as a warning and also resyncs (the content service then writes lost items back from memory).
 *
 * Writes fail fast with `StoreUnavailableError` while Redis is down (no offline queue); reads and
 * search go on from the replica's in-memory index. Writes go on a third duplicate connection, and
 * are acknowledged at the durability level (`KVSTORE_DURABILITY`: WAIT / WAITAOF after the write script,
 * on that connection, so a wait never holds up the heartbeat PING, rate limiting or reads).
 *
 * A write whose script call was sent but not confirmed (a command timeout on a paused server, a
 * connection lost mid-reply) may have run, or may still run once the server resumes. Its outcome
 * is unknown, and the 503 says so ("may or may not have been stored; retrying is safe": ingest
 * replaces by id). Each write's notice carries a token; the replica remembers the token from
 * before sending until the write is acknowledged or certainly not stored, and when such a notice
 * shows up in the stream (the write did run: data and notice are one atomic step) it re-reads those ids
 * like another replica's change instead of skipping its own entry. Other replicas index it anyway, so all of them converge on what Redis holds.
 *
 * Deletes (issue 39) go in the same atomic step as the puts (the `write` script, redis-scripts.ts),
 * at the same durability level, and leave tombstones in `<prefix>:deleted` for the retention
 * period: a replica that missed a delete finds the id absent at its reload, and its write-back
 * (`restore`) finds the tombstone and drops the item instead of writing it back. Every replica
 * also remembers the deletions it made or read in the stream (`RecentDeletions`, bounded) and
 * writes them back at each reload (`restoreDeletions`), so a Redis that lost its tombstones (a
 * restart without persistence, a failover to a copy without them) still converges on "gone",
 * whichever replica's write-back comes first.
 */
export class RedisContentStore implements ContentStore {
  readonly kind = 'kvstore' as const;
  /** The items' vectors, in `<prefix>:vectors` (redis-vectors.ts). */
  readonly vectors: RedisVectorRecords;
  private readonly itemsKey: string;
  private readonly streamKey: string;
  private readonly epochKey: string;
  private readonly keys: ContentKeys;
  /** Deletions this replica made or read in the stream, written back at each load. */
  private readonly deletions: RecentDeletions;
  private readonly clock: Clock;
  /** The epoch marker seen by the last load. */
  private epoch: string | undefined;
  private lastEpochCheck = 0;
  /** Identifies this process's own entries in the stream, which it has applied already. */
  private readonly origin = randomUUID();
  private cursor: string | undefined;
  private reader: RedisClient | undefined;
  /**
   * Writes (the write script, then WAIT/WAITAOF) go on their own connection: WAIT blocks the connection it
   * runs on, and on the shared one it would hold up the heartbeat PING, rate limiting and reads.
   */
  private writer: RedisClient | undefined;
  private readonly durability: KvstoreDurability;
  /** The waits for `KVSTORE_DURABILITY` after each write (durable-writes.ts). */
  private readonly durable: DurableWrites;
  private readerLoop: Promise<void> | undefined;
  private closed = false;
  private handlers: RemoteChangeHandlers | undefined;
  /**
   * Tokens of this replica's writes that Redis has not confirmed (yet), with their ids (insertion
   * order = age): added before a write is sent, removed once it is acknowledged or certainly not
   * stored, or when the reader meets its notice (and then re-reads its ids).
   */
  private readonly unconfirmed = new Map<string, readonly string[]>();
  /**
   * Set when the server evicted keys: the reader reloads in full (and the content service writes back
   * what is missing, counted in `store_losses`) before it reads the stream again. Evictions drop
   * whole keys (the item hash, the change stream or the epoch marker), so only a reload can tell
   * what went; a flag rather than the cursor, so an eviction during a reload asks for another.
   */
  private resyncWanted = false;
  private readonly onEvicted = (_keys: number, contentAtRisk: boolean) => {
    if (contentAtRisk) this.resyncWanted = true;
  };

  constructor(private readonly opts: RedisContentStoreOptions) {
    const keys = contentKeys(opts.prefix ?? DEFAULT_KVSTORE.keyPrefix, opts.connection.mode);
    this.itemsKey = keys.items;
    this.streamKey = keys.changes;
    this.epochKey = keys.epoch;
    this.keys = keys;
    this.clock = opts.clock ?? systemClock;
    this.deletions = new RecentDeletions(
      opts.tombstoneRetentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS,
      opts.rememberedDeletions ?? 100_000,
    );
    this.durability = opts.durability ?? defaultDurability(opts.connection.mode);
    this.durable = new DurableWrites(this.durability, opts.connection, opts.durabilityWaitMs ?? 200, (e) =>
      this.reportFailure(e),
    );
    opts.connection.eviction.on('evicted', this.onEvicted);
    this.vectors = new RedisVectorRecords(opts.connection, keys, this.origin, opts.streamMaxLen ?? 10000, opts.logger);
  }

  private client(): RedisClient {
    const conn = this.opts.connection;
    if (!conn.client || !conn.available) {
      const why = conn.state === 'unresponsive' ? 'is not answering in time' : 'is unreachable';
      throw new StoreUnavailableError(
        `the key-value store (KVSTORE_URL) ${why}; nothing was stored, and content cannot be written until it returns`,
      );
    }
    return conn.client;
  }

  /** Writes of this replica whose outcome is still unknown (for tests and diagnostics). */
  get unconfirmedWrites(): number {
    return this.unconfirmed.size;
  }

  /**
   * Reads every item (HSCAN in pages, so no single command is slow) and remembers the stream
   * position. Each page's items are packed as they are parsed (lazy-item.ts: ~7 µs an item with
   * the parse, 3.5 ms a page), not all at once by the content service: 5.5 s in one turn at 1M.
   */
  async load(): Promise<Item[]> {
    try {
      const c = this.client();
      // Marker first: data lost after it is seen by the next epoch check, never missed.
      await c.set(this.epochKey, randomUUID(), 'NX');
      const epoch = (await c.get(this.epochKey)) ?? undefined;
      await this.restoreDeletions(c);
      const last = await c.xrevrange(this.streamKey, '+', '-', 'COUNT', 1);
      const cursorAtStart = last[0]?.[0] ?? '0-0';
      const items: Item[] = [];
      let scan = '0';
      do {
        const [next, flat] = await c.hscan(this.itemsKey, scan, 'COUNT', SCAN_COUNT);
        for (let i = 1; i < flat.length; i += 2) items.push(packItem(fromRecord(JSON.parse(flat[i]) as ItemRecord)));
        scan = next;
      } while (scan !== '0');
      // Changes made between XREVRANGE and the scan are read again from the stream: harmless,
      // since a change only says "re-read these ids".
      this.cursor = cursorAtStart;
      this.epoch = epoch;
      return items;
    } catch (e) {
      if (e instanceof StoreUnavailableError) throw e;
      this.opts.connection.commandFailed(e);
      throw new StoreUnavailableError(`could not read content from the key-value store: ${(e as Error).message}`);
    } finally {
      // After the first attempt, successful or not: the reader retries a failed load itself.
      this.startReader();
      this.startWriter();
    }
  }

  async write(items: readonly Item[], removed: readonly string[] = []): Promise<void> {
    if (!items.length && !removed.length) return;
    // Each item's record in steps of the event loop (time-steps.ts): the 10,000 items of a full
    // upload (~12 MB of JSON) were one loop (issue 37). Nothing is sent until all are made: still
    // one script call, and the checks below see the state of the sending.
    const fields: string[] = [];
    const step = stepper();
    for (const i of items) {
      fields.push(i.id, JSON.stringify(toRecord(i)));
      await step();
    }
    // A policy that may evict the content keys, found after the start and not accepted: a write
    // acknowledged now could be dropped by Redis, so none is taken (the start refuses it outright).
    const refusal = this.opts.connection.eviction.refusal;
    if (refusal) throw new StoreUnavailableError(`content writes are refused: ${refusal}; nothing was stored`);
    const conn = await this.writeConnection();
    const idList = [...items.map((i) => i.id), ...removed];
    const token = randomUUID();
    // Remembered before sending: the reader may see the notice before this call learns the outcome.
    this.remember(token, idList);
    const seq = this.durable.numberWrite(conn);
    const now = this.clock.now();
    let stamps: unknown;
    try {
      stamps = await runScript(conn, CONTENT_SCRIPTS.write, scriptKeys(this.keys), [
        String(this.opts.streamMaxLen ?? 10000),
        this.origin,
        token,
        String(now),
        removed.length ? String(now - this.deletions.retentionMs) : '',
        String(items.length),
        ...fields,
        ...removed,
      ]);
    } catch (e) {
      this.reportFailure(e);
      const message = (e as Error).message;
      // Refused before running (the connection dropped just now; a replica after a failover; MOVED
      // or CLUSTERDOWN on a Cluster): certainly not stored.
      if (
        !isCommandTimeout(e) &&
        /enableOfflineQueue|isn't writeable|EXECABORT|MOVED|CLUSTERDOWN|READONLY/i.test(message)
      ) {
        this.unconfirmed.delete(token);
        if (conn !== this.writer && this.writer instanceof Cluster) this.writer.refreshSlotsCache();
        throw new StoreUnavailableError(`the key-value store refused the write (${message}); nothing was stored`);
      }
      throw this.unknownOutcome(idList, message);
    }
    // Remembered once the script ran (the primary holds the deletions), whatever the level says.
    for (const i of items) this.deletions.forget(i.id, Date.parse(i.updated_at));
    // In steps, one id after another (no pair made per id): a delete_where's 100,000 ids were one
    // step of the loop here (issue 39).
    const stamped = stamps as unknown[];
    for (let k = 0; k < removed.length; k++) {
      const stamp = Number(stamped[k]);
      if (Number.isFinite(stamp)) this.deletions.remember(removed[k], stamp);
      await step();
    }
    const notDurable = await this.durable.confirm(conn, seq);
    if (notDurable) throw this.unknownOutcome(idList, notDurable);
    this.unconfirmed.delete(token);
  }

  /** Remembers deletions (this replica's or ones read in the stream) to write back should Redis lose them. */
  private noteDeletions(deletions: ReadonlyArray<readonly [string, number]>): void {
    for (const [id, stamp] of deletions) if (Number.isFinite(stamp)) this.deletions.remember(id, stamp);
  }

  /**
   * Writes back the deletions this replica remembers (see the class comment), in calls of
   * `DELETIONS_PER_CALL`: a no-op for each that Redis holds (or a newer deletion of the id, or a
   * write that superseded it); otherwise the tombstone again, and the item if it is at most as new.
   */
  private async restoreDeletions(c: RedisClient): Promise<void> {
    const all = this.deletions.entries(this.clock.now());
    const step = stepper();
    for (let start = 0; start < all.length; start += DELETIONS_PER_CALL) {
      const args: string[] = [String(this.opts.streamMaxLen ?? 10000), this.origin];
      for (const [id, stamp] of all.slice(start, start + DELETIONS_PER_CALL)) args.push(id, String(stamp));
      const [added, removed] = (await runScript(c, CONTENT_SCRIPTS.restoreDeletions, scriptKeys(this.keys), args)) as [
        number,
        string[],
      ];
      if (added > 0)
        this.opts.logger.warn(
          { tombstones: added, items_deleted: removed.length },
          'the kvstore had lost deletions this replica remembers; wrote them back',
        );
      await step();
    }
  }

  /**
   * A failed write reported to the connection, except a timeout: the write connection queues
   * behind WAITs by design, so its timeouts say nothing about the server; the heartbeat PING on
   * the shared connection judges whether it answers.
   */
  private reportFailure(e: unknown): void {
    if (!isCommandTimeout(e)) this.opts.connection.commandFailed(e);
  }

  /**
   * The connection a write goes on: the writer (see `writer`); in cluster mode with a level that
   * waits, the writer's connection to the master of the content keys' slot, since WAIT and
   * WAITAOF count the writes of the connection they run on and name no key to be routed by.
   */
  private async writeConnection(): Promise<RedisClient> {
    this.client();
    this.startWriter();
    const w = this.writer;
    // Opened after the first load (and again after an `end`): a write that arrives while it is
    // still connecting, with the shared connection up, waits for it a short while rather than
    // being refused (a replica that just started, or a write right after a reconnect).
    if (!w || !(await whenReady(w, this.opts.writerReadyWaitMs ?? 2000))) {
      throw new StoreUnavailableError(
        'the key-value store write connection is (re)connecting; nothing was stored, and content cannot be written until it is up',
      );
    }
    if (!(w instanceof Cluster) || this.durability === 'primary') return w;
    const owner = w.slots[keySlot(this.itemsKey)]?.[0];
    const node = owner ? w.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner) : undefined;
    if (!node || node.status !== 'ready') {
      // ioredis opens a cluster node's connection lazily, at the first command routed to it; WAIT
      // names no key, so nothing else may ever open this one: open it now, or it stays 'wait'.
      if (node && node.status === 'wait') void node.connect().catch(() => undefined);
      else w.refreshSlotsCache();
      throw new StoreUnavailableError(
        `no reachable cluster master holds the content keys' slot (${owner ?? 'unknown'}); nothing was stored`,
      );
    }
    return node;
  }

  /** Remembers a write whose outcome is not known yet (oldest forgotten past `MAX_UNCONFIRMED`). */
  private remember(token: string, ids: readonly string[]): void {
    this.unconfirmed.set(token, ids);
    if (this.unconfirmed.size > MAX_UNCONFIRMED)
      this.unconfirmed.delete(this.unconfirmed.keys().next().value as string);
  }

  /** The error of an unconfirmed write (see the class comment); its token stays remembered. */
  private unknownOutcome(ids: readonly string[], reason: string): StoreUnavailableError {
    this.opts.logger.warn(
      { ids: ids.length, reason },
      'content write unconfirmed by the kvstore; will index it if it shows up in the change stream',
    );
    return new StoreUnavailableError(
      `the key-value store did not confirm the write (${reason}): the write may or may not have been stored; ` +
        'retrying is safe (items are replaced by id; deleting an id again changes nothing)',
    );
  }

  /**
   * Writes back lost items (the `restore` script, redis-scripts.ts): each only where its id is
   * absent (a write another replica made since wins) and no tombstone at least as new as the item
   * exists (a deleted item is never written back), in calls of `SCAN_COUNT` items, each with its
   * change notice so the other replicas re-read what was written.
   */
  async restore(items: readonly Item[]): Promise<RestoreOutcome> {
    const c = this.client();
    const written: string[] = [];
    const deleted: string[] = [];
    for (let start = 0; start < items.length; start += SCAN_COUNT) {
      const chunk = items.slice(start, start + SCAN_COUNT);
      const args: string[] = [String(this.opts.streamMaxLen ?? 10000), this.origin];
      for (const i of chunk) args.push(i.id, String(Date.parse(i.updated_at)), JSON.stringify(toRecord(i)));
      let codes: number[];
      try {
        codes = (await runScript(c, CONTENT_SCRIPTS.restore, scriptKeys(this.keys), args)) as number[];
      } catch (e) {
        this.opts.connection.commandFailed(e);
        throw new StoreUnavailableError(
          `could not write lost content back to the key-value store: ${(e as Error).message}`,
        );
      }
      chunk.forEach((i, k) => {
        if (codes[k] === 1) written.push(i.id);
        else if (codes[k] === -1) deleted.push(i.id);
      });
    }
    return { written, deleted };
  }

  async getMany(ids: readonly string[]): Promise<Item[]> {
    if (!ids.length) return [];
    const c = this.client();
    let values: Array<string | null>;
    try {
      values = await c.hmget(this.itemsKey, ...ids);
    } catch (e) {
      this.opts.connection.commandFailed(e);
      throw e;
    }
    return values.filter((v): v is string => v !== null).map((v) => packItem(fromRecord(JSON.parse(v) as ItemRecord)));
  }

  onRemoteChange(handlers: RemoteChangeHandlers): void {
    this.handlers = handlers;
  }

  private startWriter(): void {
    const main = this.opts.connection.client;
    if (this.closed || !main) return;
    if (!this.writer) {
      this.writer =
        main instanceof Cluster
          ? main.duplicate(undefined, { lazyConnect: true })
          : main.duplicate({ lazyConnect: true });
      this.writer.on('error', () => undefined);
    }
    // Reconnects by itself once connected; only the first connect (or one after `end`) is ours.
    if (this.writer.status === 'wait' || this.writer.status === 'end') this.writer.connect().catch(() => undefined);
  }

  private startReader(): void {
    const main = this.opts.connection.client;
    if (this.readerLoop || !main) return;
    // Blocking reads need their own connection, without the short command timeout (a guard
    // timer of BLOCK + grace replaces it).
    this.reader =
      main instanceof Cluster
        ? main.duplicate(undefined, {
            redisOptions: { ...main.options.redisOptions, commandTimeout: undefined, blockingTimeout: 60_000 },
            lazyConnect: true,
          })
        : main.duplicate({ commandTimeout: undefined, blockingTimeout: 60_000, lazyConnect: true });
    this.reader.on('error', () => undefined);
    this.readerLoop = this.readLoop(this.reader);
  }

  private async readLoop(reader: RedisClient): Promise<void> {
    const retryMs = this.opts.retryMs ?? 500;
    while (!this.closed) {
      try {
        if (reader.status === 'wait' || reader.status === 'end') await reader.connect();
        if (this.resyncWanted) {
          this.resyncWanted = false;
          this.cursor = undefined;
        }
        if (this.cursor === undefined) {
          // Never loaded, or a read failed: reload everything (which sets the cursor).
          if (this.handlers) await this.handlers.resync();
          else await this.load();
          continue;
        }
        const from = this.cursor;
        const blockMs = this.opts.blockMs ?? 5000;
        const res = await reader.xread('COUNT', 1000, 'BLOCK', blockMs, 'STREAMS', this.streamKey, from);
        if (this.closed || this.cursor !== from || this.resyncWanted) continue;
        if (Date.now() - this.lastEpochCheck >= blockMs && (await this.epochChanged())) {
          this.cursor = undefined;
          continue;
        }
        for (const [, entries] of res ?? []) {
          for (const [id, kv] of entries) {
            this.cursor = id;
            const fields = pairs(kv);
            let ids: string[];
            let deletions: Record<string, number>;
            try {
              ids = JSON.parse(fields.ids ?? '[]') as string[];
              deletions = JSON.parse(fields.deleted ?? '{}') as Record<string, number>;
            } catch {
              this.opts.logger.warn({ entry: id }, 'ignoring a malformed content change notice');
              continue;
            }
            // Every replica remembers the deletions it reads (to write them back should Redis lose them).
            this.noteDeletions(Object.entries(deletions));
            if (fields.vectors !== undefined) {
              if (fields.origin !== this.origin) this.vectors.heard(JSON.parse(fields.vectors) as string[]);
              continue;
            }
            // Own writes are in the in-memory copy already, except those Redis ran without telling us.
            if (fields.origin === this.origin && !this.unconfirmed.delete(fields.write ?? '')) continue;
            await this.handlers?.change({
              ids,
              deleted: deletions,
              restoredDeletions: fields.kind === 'restore-deletions',
            });
          }
        }
      } catch (e) {
        if (this.closed) break;
        this.opts.logger.debug({ err: (e as Error).message }, 'content change reader failed; will resync');
        this.cursor = undefined;
        await sleep(retryMs);
      }
    }
  }

  /**
   * True when the epoch marker is gone or differs from the one the last load saw: Redis lost its
   * data while connected. An unanswered check proves nothing and is tried again later.
   */
  private async epochChanged(): Promise<boolean> {
    this.lastEpochCheck = Date.now();
    let now: string | null;
    try {
      now = await this.client().get(this.epochKey);
    } catch {
      return false;
    }
    if (this.epoch === undefined || now === this.epoch) return false;
    this.opts.logger.warn(
      { key: this.epochKey },
      'the kvstore lost its content (epoch marker missing or replaced: FLUSHALL, or a restart or failover without the data); reloading',
    );
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.opts.connection.eviction.off('evicted', this.onEvicted);
    this.durable.close();
    this.reader?.disconnect();
    this.writer?.disconnect();
    await this.readerLoop?.catch(() => undefined);
  }
}

function pairs(kv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < kv.length; i += 2) out[kv[i]] = kv[i + 1];
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

/**
 * Resolves true once `c` is ready (at once when it is), false when it is not within `ms` or
 * it ends first.
 */
function whenReady(c: RedisClient, ms: number): Promise<boolean> {
  if (c.status === 'ready') return Promise.resolve(true);
  if (c.status === 'end' || ms <= 0) return Promise.resolve(false);
  return eventOrTimeout(c, ['ready'], ['end'], ms);
}
