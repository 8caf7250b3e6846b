import fc from 'fast-check';
import pino from 'pino';
import { ManualClock } from '../../helpers/manual-clock';
import { ContentService } from '../../../service/content/content-service';
import { compareNewestFirst, type Item } from '../../../service/content/item';
import { packItem, unwrapItem } from '../../../service/content/lazy-item';
import { STEP_BUDGET_MS } from '../../../service/lib/yield-to-loop';
import {
  StoreUnavailableError,
  type ContentStore,
  type RemoteChangeHandlers,
  type RestoreOutcome,
} from '../../../service/content/content-store';
import { PROPERTY_HANG_GUARD_MS, PROPERTY_RUN_HANG_GUARD_MS } from '../../helpers/property';

/**
 * A model of the Redis content store (`RedisContentStore`'s contract) shared by replicas: one hash of
 * items, tombstones and revivals (redis-scripts.ts), a change stream whose entries carry the
 * writer's origin, write token and the stamps of deleted ids, HSCAN-like loads that may miss keys
 * added while they run, write-backs that never resurrect a deleted item, and a Redis that can lose
 * everything. Every store step yields to fast-check's scheduler, so the property below runs over
 * the interleavings of acknowledges, deletes, reconnects, resyncs, write-backs and change notices.
 */
class SharedModel {
  readonly hash = new Map<string, Item>();
  /** Tombstones: id → the deletion's stamp (ms). */
  readonly deleted = new Map<string, number>();
  /** Deletions a later write superseded: id → the stamp superseded. */
  readonly revived = new Map<string, number>();
  stream: Array<{
    seq: number;
    ids: string[];
    origin: string;
    token: string;
    kind?: 'restore' | 'restore-deletions';
    deleted: Map<string, number>;
  }> = [];
  private seq = 0;
  /** Items removed by losses, in all. */
  lostItems = 0;
  step: () => Promise<void> = async () => undefined;
  /** One page of a load's scan. */
  scanStep: () => Promise<void> = () => this.step();

  append(e: Omit<SharedModel['stream'][number], 'seq'>): void {
    this.stream.push({ seq: ++this.seq, ...e });
  }

  get head(): number {
    return this.seq;
  }

  /** A put: the item, and any tombstone of its id becomes a revival (the `write` script). */
  put(i: Item): void {
    this.hash.set(i.id, i);
    const t = this.deleted.get(i.id);
    if (t !== undefined) {
      this.deleted.delete(i.id);
      this.revived.set(i.id, t);
    }
  }

  /** Redis restarts without persistence: data, tombstones and stream gone. */
  wipe(): void {
    this.lostItems += this.hash.size;
    this.hash.clear();
    this.deleted.clear();
    this.revived.clear();
    this.stream = [];
  }
}

class ModelStore implements ContentStore {
  readonly kind = 'kvstore' as const;
  cursor: number | undefined;
  handlers: RemoteChangeHandlers | undefined;
  private readonly unconfirmed = new Set<string>();
  /** Deletions this replica made or read (RecentDeletions: written back at each load). */
  private readonly remembered = new Map<string, number>();
  private tokens = 0;
  /** The reader's work, one task at a time (RedisContentStore's reader loop is sequential). */
  private reader: Promise<void> = Promise.resolve();
  private conn: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: SharedModel,
    readonly origin: string,
    private readonly clock: ManualClock,
  ) {}

  /**
   * One command on this replica's connection: commands run in the order they were sent, each at
   * a step of the scheduler (other replicas' commands interleave), and answer in that order.
   */
  private exec<T>(effect: () => T, step: () => Promise<void> = () => this.redis.step()): Promise<T> {
    const run = this.conn.then(async () => {
      await step();
      return effect();
    });
    this.conn = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Every item, packed (the `ContentStore` contract: RedisContentStore packs each record it reads). */
  async load(): Promise<Item[]> {
    // The `restoreDeletions` script: each remembered deletion Redis lacks (and no write superseded).
    await this.exec(() => {
      const removed: string[] = [];
      const stamps = new Map<string, number>();
      for (const [id, s] of this.remembered) {
        const t = this.redis.deleted.get(id);
        const r = this.redis.revived.get(id);
        if ((t !== undefined && t >= s) || (r !== undefined && r >= s)) continue;
        const old = this.redis.hash.get(id);
        if (old && Date.parse(old.updated_at) > s) continue;
        if (old) {
          this.redis.hash.delete(id);
          removed.push(id);
          stamps.set(id, s);
        }
        this.redis.deleted.set(id, s);
      }
      if (removed.length)
        this.redis.append({ ids: removed, origin: this.origin, token: '', kind: 'restore-deletions', deleted: stamps });
    });
    const cursorAtStart = await this.exec(() => this.redis.head);
    // HSCAN: keys present for the whole scan are returned; keys added meanwhile may be missed.
    const keys = await this.exec(() => [...this.redis.hash.keys()].sort());
    const out: Item[] = [];
    for (let i = 0; i < keys.length; i += 2) {
      const page = await this.exec(
        () => keys.slice(i, i + 2).map((k) => this.redis.hash.get(k)),
        () => this.redis.scanStep(),
      );
      // Each read makes new items of the stored records, as Redis's does (a reload compares bytes).
      for (const v of page) if (v) out.push(packItem(unwrapItem(v)));
    }
    this.cursor = cursorAtStart;
    return out;
  }

  async write(items: readonly Item[], removed: readonly string[] = [], replyLost = false): Promise<void> {
    const token = `${this.origin}-${++this.tokens}`;
    const now = this.clock.now();
    // Remembered before it is sent (as RedisContentStore does): the reader may see the entry first.
    this.unconfirmed.add(token);
    const stamps = await this.exec(() => {
      for (const i of items) this.redis.put(i);
      const deleted = new Map<string, number>();
      for (const id of removed) {
        const old = this.redis.hash.get(id);
        let s = Math.max(now, old ? Date.parse(old.updated_at) : now);
        this.redis.hash.delete(id);
        const t = this.redis.deleted.get(id);
        if (t !== undefined && t >= s) s = t;
        else this.redis.deleted.set(id, s);
        deleted.set(id, s);
      }
      this.redis.append({ ids: [...items.map((i) => i.id), ...removed], origin: this.origin, token, deleted });
      return deleted;
    });
    for (const i of items)
      if (Date.parse(i.updated_at) > (this.remembered.get(i.id) ?? Infinity)) this.remembered.delete(i.id);
    this.note(stamps);
    if (replyLost) throw new StoreUnavailableError('the write may or may not have been stored');
    this.unconfirmed.delete(token);
  }

  private note(deletions: ReadonlyMap<string, number>): void {
    for (const [id, s] of deletions) if ((this.remembered.get(id) ?? -Infinity) < s) this.remembered.set(id, s);
  }

  getMany(ids: readonly string[]): Promise<Item[]> {
    return this.exec(() =>
      ids
        .map((id) => this.redis.hash.get(id))
        .filter((i): i is Item => i !== undefined)
        .map((i) => packItem(unwrapItem(i))),
    );
  }

  restore(items: readonly Item[]): Promise<RestoreOutcome> {
    return this.exec(() => {
      const written: string[] = [];
      const deleted: string[] = [];
      for (const i of items) {
        if (this.redis.hash.has(i.id)) continue;
        const t = this.redis.deleted.get(i.id);
        if (t !== undefined && Date.parse(i.updated_at) <= t) {
          deleted.push(i.id);
          continue;
        }
        this.redis.put(i);
        written.push(i.id);
      }
      if (written.length)
        this.redis.append({ ids: written, origin: this.origin, token: '', kind: 'restore', deleted: new Map() });
      return { written, deleted };
    });
  }

  onRemoteChange(handlers: RemoteChangeHandlers): void {
    this.handlers = handlers;
  }

  /** The connection dropped: the reader resyncs in full. */
  reconnect(): Promise<void> {
    return this.enqueue(async () => {
      this.cursor = undefined;
      await this.handlers!.resync();
    });
  }

  /** The reader reads the stream from its cursor and applies other replicas' entries. */
  deliver(): Promise<void> {
    return this.enqueue(async () => {
      if (this.cursor === undefined) {
        await this.handlers!.resync();
        return;
      }
      await this.redis.step();
      const entries = this.redis.stream.filter((e) => e.seq > this.cursor!);
      for (const e of entries) {
        this.cursor = e.seq;
        this.note(e.deleted);
        if (e.origin === this.origin && !this.unconfirmed.delete(e.token)) continue;
        await this.handlers!.change({
          ids: e.ids,
          deleted: Object.fromEntries(e.deleted),
          restoredDeletions: e.kind === 'restore-deletions',
        });
      }
    });
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    // A failed task leaves the cursor unset: the next one resyncs (as RedisContentStore's reader does).
    const run = this.reader.then(task).catch(() => {
      this.cursor = undefined;
    });
    this.reader = run;
    return run;
  }

  async close(): Promise<void> {}
}

type Command =
  | { kind: 'ingest'; replica: number; id: string; replyLost: boolean }
  | { kind: 'delete'; replica: number; id: string; replyLost: boolean }
  | { kind: 'reconnect'; replica: number }
  | { kind: 'deliver'; replica: number }
  | { kind: 'wipe' };

const REPLICAS = 2;
const IDS = ['a', 'b', 'c', 'd', 'e', 'f'];
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('ingest' as const),
      replica: fc.nat(REPLICAS - 1),
      id: fc.constantFrom(...IDS),
      replyLost: fc.nat(4).map((n) => n === 0),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('delete' as const),
      replica: fc.nat(REPLICAS - 1),
      id: fc.constantFrom(...IDS),
      replyLost: fc.nat(4).map((n) => n === 0),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reconnect' as const), replica: fc.nat(REPLICAS - 1) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('deliver' as const), replica: fc.nat(REPLICAS - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wipe' as const) }) },
);

/**
 * Rounds of delivery the replicas get to settle after the commands. A round's write-backs are read
 * in the next (in 40 seeds of 300 runs, one run needed a second round and none a third); a stream
 * still moving after this many (replicas writing back to each other without end) is a violation.
 */
const SETTLING_ROUNDS = 4;

const silent = pino({ level: 'silent' });
/** The tags of an item's versions, by version modulo 3 (case varies: the filter is case-insensitive). */
const VERSION_TAGS = [['Red'], ['red', 'Blue'], []];

interface Replica {
  readonly store: ModelStore;
  readonly content: ContentService;
  /** Ids this replica acknowledged (ingest resolved). */
  readonly acked: Set<string>;
}

/**
 * The replicas. `stepMs` is the budget of a step of their passes over many items: 0 yields a turn
 * of the event loop after every item, so a reload's merge, write-back check and deletions, a
 * write's plan and its entry in the in-memory copy interleave with the other commands at every
 * item, as they do at a million items; with the default none of this run's few items yields.
 */
async function replicas(redis: SharedModel, clock: ManualClock, stepMs?: number): Promise<Replica[]> {
  const out: Replica[] = [];
  for (let r = 0; r < REPLICAS; r++) {
    const store = new ModelStore(redis, `replica-${r}`, clock);
    const content = new ContentService(store, clock, silent, stepMs);
    await content.start();
    out.push({ store, content, acked: new Set() });
  }
  return out;
}

const TYPE_ORDER = { article: 0, project: 1, experience: 2 };

/**
 * Where a replica's listings (`all`, by scope) are not a sort from scratch of its in-memory copy,
 * item for item (the very items it holds: a reload keeps the listings and merges its changes in).
 */
function listingViolations(content: ContentService, n: number): string[] {
  const held = IDS.map((id) => content.get(id)).filter((i): i is Item => i !== undefined);
  const out: string[] = [];
  for (const scope of ['all', 'article', 'project'] as const) {
    const expected = held
      .filter((i) => scope === 'all' || i.type === scope)
      .sort((a, b) => (scope === 'all' ? TYPE_ORDER[a.type] - TYPE_ORDER[b.type] : 0) || compareNewestFirst(a, b));
    const listed = content.all(scope);
    if (listed.length !== expected.length || listed.some((i, k) => i !== expected[k]))
      out.push(
        `replica ${n} lists ${scope} as ${listed.map((i) => i.id).join()} but its in-memory copy sorts as ${expected.map((i) => i.id).join()}`,
      );
  }
  return out;
}

/** When an operation on an id started and ended (ticks of the run), and whether it was acknowledged. */
interface Op {
  readonly kind: 'ingest' | 'delete';
  readonly start: number;
  end?: number;
  acked?: boolean;
}

/**
 * What the operations on one id require at the end: `gone` when a delete was acknowledged and
 * every write of the id ended before it started (none could land after it); `served` when a write
 * was acknowledged and every delete of the id ended before it started. Overlapping operations
 * may land in either order: then only convergence is required.
 */
function required(ops: readonly Op[]): 'gone' | 'served' | undefined {
  for (const [kind, other, verdict] of [
    ['delete', 'ingest', 'gone'],
    ['ingest', 'delete', 'served'],
  ] as const) {
    const latest = ops.filter((o) => o.kind === kind && o.acked).sort((x, y) => y.start - x.start)[0];
    if (!latest) continue;
    const othersBefore = ops.filter((o) => o.kind === other).every((o) => o.end !== undefined && o.end < latest.start);
    if (othersBefore) return verdict;
  }
  return undefined;
}

/**
 * Runs `commands` all at once under the scheduler (operations on one id at one replica too:
 * issue 39's deletes interleave freely with writes); returns the violations found, if any.
 */
async function run(s: fc.Scheduler, commands: readonly Command[], stepMs?: number) {
  const redis = new SharedModel();
  const clock = new ManualClock();
  const rs = await replicas(redis, clock, stepMs);
  redis.step = () => s.schedule(Promise.resolve());
  const violations: string[] = [];
  let version = 0;
  let tick = 0;
  const ops = new Map<string, Op[]>(IDS.map((id) => [id, []]));
  // Ids no command deletes keep issue 26's promise at every moment: acknowledged, then held.
  const deletedSomewhere = new Set(commands.flatMap((c) => (c.kind === 'delete' ? [c.id] : [])));
  const ingested = new Set(commands.flatMap((c) => (c.kind === 'ingest' ? [c.id] : [])));
  const started = commands.map(async (c) => {
    await s.schedule(Promise.resolve());
    if (c.kind === 'wipe') {
      redis.wipe();
      // A restart drops every connection: each replica's reader resyncs.
      await Promise.all(rs.map((r) => r.store.reconnect()));
    } else if (c.kind === 'reconnect') await rs[c.replica].store.reconnect();
    else if (c.kind === 'deliver') await rs[c.replica].store.deliver();
    else {
      const r = rs[c.replica];
      const op: Op = { kind: c.kind, start: ++tick };
      ops.get(c.id)!.push(op);
      clock.advance(1);
      const write = r.store.write.bind(r.store);
      // One write of this replica has its reply lost (it ran, but the replica does not know).
      if (c.replyLost) r.store.write = (items, removed) => ((r.store.write = write), write(items, removed, true));
      try {
        if (c.kind === 'delete') {
          await r.content.write({ delete: [c.id] });
          // (Another replica's write of the id may have been applied since: only when none is sent.)
          if (!ingested.has(c.id) && r.content.get(c.id))
            violations.push(`replica ${c.replica} deleted ${c.id} but still serves it right after`);
        } else {
          const body = `v${++version}`;
          // Tags and type change between versions, so the replicas' tag indexes move items around.
          await r.content.ingest([
            {
              id: c.id,
              type: version % 4 === 0 ? 'project' : 'article',
              title: c.id,
              body,
              tags: VERSION_TAGS[version % 3],
            },
          ]);
          r.content.list('article', { limit: 10, offset: 0, tag: 'red' });
          r.content.all();
          r.acked.add(c.id);
          if (!deletedSomewhere.has(c.id) && !r.content.get(c.id))
            violations.push(`replica ${c.replica} acknowledged ${c.id} but does not hold it right after`);
        }
        op.acked = true;
      } catch (e) {
        if (!(e instanceof StoreUnavailableError)) throw e;
        op.acked = false;
      } finally {
        op.end = ++tick;
      }
    }
    // Whatever ran, every item a replica acknowledged (and nobody deletes) stays in its in-memory
    // copy, and its listings are its in-memory copy's, also while a reload runs.
    for (const [n, r] of rs.entries()) {
      violations.push(...listingViolations(r.content, n));
      for (const id of r.acked)
        if (!deletedSomewhere.has(id) && !r.content.get(id))
          violations.push(`replica ${n} forgot ${id} after a ${c.kind}`);
    }
  });
  // Releases scheduled steps until every command has settled, including steps scheduled after a
  // real turn of the event loop (the service yields with setImmediate between its steps). waitIdle
  // returned when nothing was scheduled at that instant; a step scheduled a turn later then waited
  // for ever, and the property hung in about one run of a few hundred (issue 36: it was seen as a
  // 60 s timeout "on a busy machine").
  await s.waitFor(Promise.all(started));
  // Quiet now: steps run at once; each reader catches up on the stream, in rounds until a round
  // adds nothing to it. A delivery may itself write: a replica holding a version newer by its clock
  // than a deletion it reads writes that version back (docs/failure-behaviour.md, Clocks), and a
  // reader that caught up earlier in the round reads that write-back in the next one (one round
  // left replica 0 without an item replica 1 wrote back after it: FC_SEED=428643064, below).
  redis.step = async () => undefined;
  for (let round = 1; ; round++) {
    const head = redis.head;
    for (const r of rs) await r.store.deliver();
    if (redis.head === head) break;
    if (round === SETTLING_ROUNDS) {
      violations.push(`the change stream still moved in delivery round ${round} after the commands`);
      break;
    }
  }
  for (const [n, r] of rs.entries()) {
    for (const id of r.acked)
      if (!deletedSomewhere.has(id) && !r.content.get(id)) violations.push(`replica ${n} forgot ${id}`);
  }
  for (const [n, r] of rs.entries()) violations.push(...listingViolations(r.content, n));
  const ackedAnywhere = new Set(rs.flatMap((r) => [...r.acked]));
  for (const id of ackedAnywhere) {
    if (deletedSomewhere.has(id)) continue;
    if (!redis.hash.has(id)) violations.push(`${id} acknowledged but missing from the store`);
    for (const [n, r] of rs.entries())
      if (!r.content.get(id)) violations.push(`${id} acknowledged but not served by replica ${n}`);
  }
  // Deleted means gone everywhere; a write acknowledged after every delete of its id is served.
  for (const [id, o] of ops) {
    const must = required(o);
    if (must === 'gone') {
      if (redis.hash.has(id)) violations.push(`${id} deleted (acknowledged) but back in the store`);
      for (const [n, r] of rs.entries())
        if (r.content.get(id)) violations.push(`${id} deleted (acknowledged) but served by replica ${n}`);
    } else if (must === 'served') {
      if (!redis.hash.has(id))
        violations.push(`${id} written after its deletes (acknowledged) but missing from the store`);
      for (const [n, r] of rs.entries())
        if (!r.content.get(id))
          violations.push(`${id} written after its deletes (acknowledged) but not served by replica ${n}`);
    }
  }
  // Every replica converges on what the store holds, deletions included.
  for (const [id, item] of redis.hash) {
    for (const [n, r] of rs.entries()) {
      if (r.content.get(id)?.body !== item.body)
        violations.push(`replica ${n} serves ${id}=${r.content.get(id)?.body} but the store holds ${item.body}`);
    }
  }
  for (const [n, r] of rs.entries())
    for (const i of r.content.all())
      if (!redis.hash.has(i.id)) violations.push(`replica ${n} serves ${i.id}, absent from the store`);
  // Every replica lists the same pages, tag filters included, as the naive filter of its in-memory copy.
  for (const type of ['article', 'project'] as const) {
    for (const tag of ['RED', 'blue']) {
      const naive = rs[0].content
        .all(type)
        .filter((i) => i.tags.some((t) => t.toLowerCase() === tag.toLowerCase()))
        .map((i) => i.id);
      for (const [n, r] of rs.entries()) {
        const ids = r.content.list(type, { limit: 100, offset: 0, tag }).items.map((i) => i.id);
        if (JSON.stringify(ids) !== JSON.stringify(naive))
          violations.push(
            `replica ${n} lists ${type}s tagged ${tag} as ${ids.join()} but replica 0's in-memory copy gives ${naive.join()}`,
          );
      }
    }
  }
  const counted = rs.reduce((sum, r) => sum + r.content.storeLosses.items, 0);
  const wiped = commands.some((c) => c.kind === 'wipe');
  // The one known over-count (docs/failure-behaviour.md): an id both written and deleted, whose
  // writes land in Redis out of their `updated_at` order, or whose deletion was superseded by a
  // write while the store lost the tombstone, can be written back once as lost by a replica that
  // missed the delete. Ids never both written and deleted are counted exactly.
  const raced = IDS.filter(
    (id) => ops.get(id)!.some((o) => o.kind === 'delete') && ops.get(id)!.some((o) => o.kind === 'ingest'),
  ).length;
  if (!wiped && counted > raced) violations.push(`store_losses counted ${counted} items, but the store lost nothing`);
  if (counted > redis.lostItems + raced)
    violations.push(`store_losses counted ${counted} items, more than the ${redis.lostItems} the store lost`);
  return violations;
}

describe('ContentService resync merges, never replaces (model of the shared store, every interleaving fast-check finds)', () => {
  it(
    'an item a replica acknowledged stays in its in-memory copy, every replica converges, and store_losses counts only real losses',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          fc.array(command, { minLength: 1, maxLength: 14 }),
          fc.constantFrom(0, STEP_BUDGET_MS),
          async (s, commands, stepMs) => {
            expect(await run(s, commands, stepMs)).toEqual([]);
          },
        ),
        { numRuns: 300, timeout: PROPERTY_RUN_HANG_GUARD_MS },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('FC_SEED=428643064: an item written back while the last replica catches up reaches the replica that caught up first', async () => {
    // Replica 1's v2 of d landed, then replica 0's older-stamped v1 over it, then replica 0's delete
    // of d stamped before v2; replica 1 read the delete only in the final delivery, still held v2
    // (newer by its clock) and wrote it back after replica 0 had caught up (one round: a violation).
    const commands: Command[] = [
      { kind: 'deliver', replica: 0 },
      { kind: 'delete', replica: 0, id: 'f', replyLost: false },
      { kind: 'reconnect', replica: 0 },
      { kind: 'deliver', replica: 0 },
      { kind: 'ingest', replica: 1, id: 'b', replyLost: false },
      { kind: 'deliver', replica: 0 },
      { kind: 'wipe' },
      { kind: 'ingest', replica: 0, id: 'd', replyLost: false },
      { kind: 'ingest', replica: 0, id: 'b', replyLost: false },
      { kind: 'delete', replica: 0, id: 'd', replyLost: false },
      { kind: 'ingest', replica: 1, id: 'd', replyLost: false },
    ];
    // The order in which fast-check's scheduler resolved the run's steps (its counterexample).
    const order = [
      3, 12, 10, 6, 2, 8, 13, 14, 7, 11, 4, 9, 5, 15, 1, 16, 18, 19, 20, 21, 17, 22, 23, 25, 24, 26, 27, 28, 29, 30, 31,
      32, 33, 34, 35, 36, 37, 38,
    ];
    expect(await run(fc.schedulerFor(order), commands)).toEqual([]);
  });

  it('a replica that holds a version newer by its clock than a deletion writes it back, and the others serve it once they read that', async () => {
    // Two clocks (replica 0's behind): replica 0's write lands over replica 1's newer-stamped one,
    // and replica 0's delete is stamped before replica 1's version (docs/failure-behaviour.md, Clocks).
    const redis = new SharedModel();
    const clocks = [new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 5)), new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10))];
    const [a, b] = await Promise.all(
      clocks.map(async (clock, r) => {
        const content = new ContentService(new ModelStore(redis, `replica-${r}`, clock), clock, silent);
        await content.start();
        return { store: content.store as ModelStore, content };
      }),
    );
    await b.content.ingest([{ id: 'd', type: 'article', title: 'd', body: 'newer' }]);
    await a.content.ingest([{ id: 'd', type: 'article', title: 'd', body: 'older' }]);
    clocks[0].advance(1);
    await a.content.write({ delete: ['d'] });
    expect(redis.hash.has('d')).toBe(false);
    // Replica 0 catches up first: nothing of d to serve. Replica 1 then reads the delete, holds d
    // newer than it, and writes d back: the store holds it again, and replica 0 has not read that.
    await a.store.deliver();
    await b.store.deliver();
    expect(redis.hash.get('d')?.body).toBe('newer');
    expect(b.content.get('d')?.body).toBe('newer');
    expect(a.content.get('d')).toBeUndefined();
    await a.store.deliver();
    expect(a.content.get('d')?.body).toBe('newer');
  });

  it('the reported case: items acknowledged while lost items are written back stay served', async () => {
    const redis = new SharedModel();
    const rs = await replicas(redis, new ManualClock());
    const [a] = rs;
    await a.content.ingest([{ id: 'old', type: 'article', title: 'old', body: 'x' }]);
    redis.wipe();
    // The write-back of `old` waits until the acknowledgement of `new` has been made.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const restore = a.store.restore.bind(a.store);
    a.store.restore = async (items) => {
      await gate;
      return restore(items);
    };
    const resync = a.store.reconnect();
    await new Promise((r) => setImmediate(r));
    await a.content.ingest([{ id: 'new', type: 'article', title: 'new', body: 'y' }]);
    release();
    await resync;
    expect(a.content.get('new')).toBeDefined();
    expect(a.content.get('old')).toBeDefined();
    // Only `old` was lost; `new` was written after the reload began.
    expect(a.content.storeLosses).toEqual({ events: 1, items: 1 });
  });

  it('a resync that finds nothing lost counts nothing, even with writes acknowledged while it scans', async () => {
    const redis = new SharedModel();
    const rs = await replicas(redis, new ManualClock());
    const [a, b] = rs;
    await a.content.ingest([{ id: 'one', type: 'article', title: 'one', body: 'x' }]);
    await b.store.deliver();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    redis.scanStep = () => gate;
    // The scans go on once the write is sent. Released after the write resolved, the gate hung the
    // test whenever the ingest yielded a turn before sending it (its steps yield after 5 ms: on a
    // busy machine): the write was then queued on replica 1's connection behind its own gated scan
    // (2 of 40 suites at load 7 on 2 cores, 30 s timeouts).
    const write = b.store.write.bind(b.store);
    b.store.write = (items, removed) => {
      const sent = write(items, removed);
      release();
      return sent;
    };
    const resyncs = [a.store.reconnect(), b.store.reconnect()];
    await b.content.ingest([{ id: 'two', type: 'article', title: 'two', body: 'y' }]);
    await Promise.all(resyncs);
    for (const r of rs) await r.store.deliver();
    for (const r of rs) {
      expect(r.content.storeLosses).toEqual({ events: 0, items: 0 });
      expect(r.content.size).toBe(2);
    }
  });
});
