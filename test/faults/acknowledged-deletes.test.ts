import Redis from 'ioredis';
import request from 'supertest';
import type { SettingsInput } from '../../configs';
import type { ContentService } from '../../service/content/content-service';
import { StoreUnavailableError } from '../../service/content/content-store';
import type { FeatureSet } from '../../service/features';
import { buildTestApp, type TestApp } from '../helpers/app';
import { RedisServer } from '../../tools/harness/redis';
import { replicasOnCluster, replicasOnSentinel } from '../helpers/replicated-kvstore';
import { sleep } from './fault-run';
import { ITEMS } from './measure';

/**
 * Issue 39's row "acknowledged gone means gone everywhere" on a real redis-server (AOF on,
 * appendfsync always) with two in-process replicas: 300 items written, 60 deleted (30 through
 * each replica), a `delete_where` of a tag (its matches deleted in one write), 40 patched (sent
 * again with a new body); while the operations run every client connection is killed (CLIENT
 * KILL) again and again; then Redis is killed with -9 and restarted from its AOF, and one replica
 * is restarted. After each step: every deleted id is 404 on both replicas and absent from search
 * and listings, every patched item shows its new body, every survivor is served, Redis holds
 * exactly the survivors, and `store_losses` is 0 (nothing was lost).
 *
 * And on Sentinel (master kill -9, failover, old master back as a replica) and Cluster (the
 * content slot's master kill -9, a replica promoted, the old master back): four writers over two
 * replicas create, patch and delete their own items while the fault runs (`mixedRun`); every id
 * whose last acknowledged operation was a delete is absent from Redis and from both replicas,
 * every other one holds its last acknowledged body, `store_losses` 0.
 *
 * The operations go through `ContentService.write` (the HTTP route's own call), in process.
 */

const content = (t: TestApp) => (t.deps.features as FeatureSet).context.content;
const body = (id: string, v: string) => `Gazelles graze ${id} ${v}`;

/** Retries an operation answered 503 (both "nothing was stored" and "may or may not" are safe to retry). */
async function retried(op: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await op();
      return;
    } catch (e) {
      if (!(e instanceof StoreUnavailableError) || attempt > 200) throw e;
      await sleep(50);
    }
  }
}

async function eventually(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    // A check that throws (a connection still coming back) is tried again.
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error('condition not met in time');
}

function ingest(c: ContentService, id: string, v: string, tags: string[] = []) {
  return retried(() => c.ingest([{ id, type: 'article', title: id, body: body(id, v), tags }]));
}

/** What every replica must show: the survivors (with their bodies) and nothing of the deleted ids. */
async function expectConverged(
  url: string,
  apps: readonly TestApp[],
  expected: Map<string, string>,
  deleted: Set<string>,
) {
  const raw = new Redis(url);
  try {
    await eventually(async () => {
      const keys = new Set(await raw.hkeys(ITEMS));
      return keys.size === expected.size && [...expected.keys()].every((id) => keys.has(id));
    });
  } finally {
    raw.disconnect();
  }
  for (const t of apps) {
    await eventually(async () => content(t).size === expected.size);
    for (const id of deleted)
      expect([id, (await request(t.app).get(`/api/v1/articles/${id}`)).status]).toEqual([id, 404]);
    for (const [id, v] of expected) expect(content(t).get(id)?.body).toBe(body(id, v));
    expect((await request(t.app).get('/api/v1/articles?limit=1')).body.total).toBe(expected.size);
    expect((await request(t.app).get('/api/search?q=gazelles&limit=1')).body.total).toBe(expected.size);
    expect((await request(t.app).get('/api/v1/articles?tag=retired&limit=1')).body.total).toBe(0);
    expect((await request(t.app).get('/health')).body.content.store_losses).toEqual({ events: 0, items: 0 });
  }
}

describe('acknowledged gone means gone everywhere: deletes through two replicas on Redis with AOF', () => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;
  const input: SettingsInput = {
    service: { environment: 'testing' },
    kvstore: { url: '' },
    rateLimit: { enabled: false },
  };
  beforeAll(async () => {
    redis = await RedisServer.start({ appendonly: true });
    const settings = { ...input, kvstore: { url: redis.url } };
    a = await buildTestApp(settings);
    b = await buildTestApp(settings);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  it('300 written, 60 deleted via both, a tag deleted, 40 patched, under CLIENT KILL; then kill -9 + AOF restart and a replica restart', async () => {
    const expected = new Map<string, string>();
    const deleted = new Set<string>();
    const ids = Array.from({ length: 300 }, (_, i) => `item-${i}`);
    // Every 10th item carries the tag a delete_where removes.
    for (const [i, id] of ids.entries()) {
      await ingest(content(i % 2 ? b : a), id, 'v1', i % 10 === 5 ? ['retired'] : ['kept']);
      expected.set(id, 'v1');
    }
    const retired = ids.filter((_, i) => i % 10 === 5);
    const toDelete = ids.filter((_, i) => i % 10 !== 5).slice(0, 60);
    const toPatch = ids.filter((_, i) => i % 10 !== 5).slice(100, 140);
    // The operations, interleaved over the two replicas, while every client connection is killed.
    let killing = true;
    const killer = (async () => {
      const admin = new Redis(redis.url);
      try {
        while (killing) {
          await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
          await sleep(150);
        }
      } finally {
        admin.disconnect();
      }
    })();
    try {
      const ops: Array<Promise<void>> = [];
      for (const [k, id] of toDelete.entries())
        ops.push(retried(() => content(k % 2 ? b : a).write({ delete: [id] })).then(() => void deleted.add(id)));
      for (const [k, id] of toPatch.entries()) ops.push(ingest(content(k % 2 ? a : b), id, 'v2', ['kept']));
      // delete_where tag=retired: every match, one write.
      ops.push(
        retried(() => content(a).write({ delete: retired })).then(() => retired.forEach((id) => deleted.add(id))),
      );
      await Promise.all(ops);
    } finally {
      killing = false;
      await killer;
    }
    for (const id of deleted) expected.delete(id);
    for (const id of toPatch) expected.set(id, 'v2');
    expect(deleted.size).toBe(90);
    await expectConverged(redis.url, [a, b], expected, deleted);

    // Redis killed with -9 and restarted from its AOF: the tombstones and deletes are on disk.
    await redis.kill();
    await sleep(300);
    redis.process.start(['--appendonly', 'yes', '--appendfsync', 'always']);
    await eventually(async () => a.deps.kvstore.available && b.deps.kvstore.available);
    const check = new Redis(redis.url);
    try {
      expect(await check.zcard('svc-ai-search:content:deleted')).toBe(90);
    } finally {
      check.disconnect();
    }
    await expectConverged(redis.url, [a, b], expected, deleted);

    // A replica restarted loads the survivors only.
    await b.close();
    b = await buildTestApp({ ...input, kvstore: { url: redis.url } });
    await expectConverged(redis.url, [a, b], expected, deleted);
  }, 120_000);

  it('Redis restarted EMPTY (no persistence) right after a delete: the deleted ids stay gone on both, only the survivors count as lost', async () => {
    // A server of its own, without persistence, and two replicas of it.
    const bare = await RedisServer.start();
    const settings = { ...input, kvstore: { url: bare.url } };
    const a = await buildTestApp(settings);
    const b = await buildTestApp(settings);
    try {
      const ids = Array.from({ length: 20 }, (_, i) => `w-${i}`);
      for (const id of ids) await ingest(content(a), id, 'v1');
      await eventually(async () => content(b).size === 20);
      // a deletes 5 and Redis restarts empty at once (b may or may not have read the delete).
      const gone = ids.slice(0, 5);
      await content(a).write({ delete: gone });
      await bare.kill();
      await bare.restart();
      const expected = new Map(ids.slice(5).map((id) => [id, 'v1']));
      // Both write back what they hold; a also writes back its deletions: whichever comes first,
      // the deleted ids end gone (b either finds the tombstone, or its write-back is deleted again).
      await eventually(async () => content(a).size === 15 && content(b).size === 15, 30_000);
      const raw = a.deps.kvstore.client!;
      await eventually(async () => (await raw.hlen(ITEMS)) === 15);
      for (const t of [a, b])
        for (const id of gone) expect((await request(t.app).get(`/api/v1/articles/${id}`)).status).toBe(404);
      for (const [id] of expected) expect(await raw.hexists(ITEMS, id)).toBe(1);
      // The 15 survivors were lost and written back (counted once over both); the 5 deleted are not losses.
      await eventually(async () => {
        let items = 0;
        for (const t of [a, b])
          items += (await request(t.app).get('/health')).body.content.store_losses.items as number;
        return items === 15;
      });
    } finally {
      await a.close();
      await b.close();
      await bare.stop();
    }
  }, 60_000);
});

/** What writers saw of one id (ids are owned by one writer, so its operations are sequential). */
interface IdFate {
  /** The last acknowledged operation: written (with this body) or deleted. */
  last?: { kind: 'put'; body: string } | { kind: 'deleted' };
  /** An operation answered 503 "may or may not" after the last acknowledged one: either outcome allowed. */
  unsure: boolean;
}

/**
 * Writers over two in-process replicas that create items, patch (send again with a new body) and
 * delete their own earlier items, one operation at a time each, while `inject` runs a fault; then
 * every replica and Redis are checked: no deleted item served or stored, no acknowledged item
 * missing or stale, `store_losses` 0.
 */
async function mixedRun(opts: {
  apps: readonly TestApp[];
  prefix: string;
  inject: () => Promise<unknown>;
  stored: () => Promise<Map<string, string>>;
}): Promise<{ acknowledged: number; deletes: number }> {
  const fates = new Map<string, IdFate>();
  let acknowledged = 0;
  let deletes = 0;
  let stop = false;
  const writer = async (w: number) => {
    const live: string[] = [];
    for (let i = 0; !stop; i++) {
      const c = content(opts.apps[(w + i) % opts.apps.length]);
      let id: string;
      let op: () => Promise<unknown>;
      let after: IdFate['last'];
      if (i % 4 === 3 && live.length) {
        id = live.shift()!;
        op = () => c.write({ delete: [id] });
        after = { kind: 'deleted' };
      } else if (i % 4 === 2 && live.length) {
        id = live[live.length - 1];
        const b = body(id, `p${i}`);
        op = () => c.ingest([{ id, type: 'article', title: id, body: b }]);
        after = { kind: 'put', body: b };
      } else {
        id = `${opts.prefix}-w${w}-${i}`;
        const b = body(id, 'v1');
        op = () => c.ingest([{ id, type: 'article', title: id, body: b }]);
        after = { kind: 'put', body: b };
      }
      const fate = fates.get(id) ?? { unsure: false };
      fates.set(id, fate);
      try {
        await op();
        fate.last = after;
        fate.unsure = false;
        acknowledged++;
        if (after.kind === 'deleted') deletes++;
        else if (!live.includes(id)) live.push(id);
      } catch (e) {
        if (!(e instanceof StoreUnavailableError)) throw e;
        if (/may or may not/.test(e.message)) fate.unsure = true;
        // An id whose delete may not have run stays out of further operations.
        if (after.kind === 'deleted' && !fate.unsure) live.push(id);
        await sleep(50);
      }
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  try {
    await eventually(async () => acknowledged >= 40, 30_000);
    await opts.inject();
    const before = acknowledged;
    await eventually(async () => acknowledged >= before + 40, 30_000);
  } finally {
    stop = true;
    await Promise.all(writers);
  }
  const stored = await opts.stored();
  for (const [id, fate] of fates) {
    if (fate.unsure || !fate.last) continue;
    const want = fate.last.kind === 'put' ? fate.last.body : undefined;
    expect([id, stored.has(id) ? JSON.parse(stored.get(id)!).body : undefined]).toEqual([id, want]);
    for (const t of opts.apps)
      await eventually(async () => content(t).get(id)?.body === want, 20_000).catch(() =>
        expect([id, content(t).get(id)?.body]).toEqual([id, want]),
      );
  }
  for (const t of opts.apps)
    expect((await request(t.app).get('/health')).body.content.store_losses).toEqual({ events: 0, items: 0 });
  return { acknowledged, deletes };
}

describe('acknowledged gone means gone everywhere: Sentinel master killed while writes, patches and deletes run', () => {
  const sentinel = replicasOnSentinel(2);

  it('master kill -9 (failover), the old master back as a replica: nothing deleted served, nothing acknowledged lost', async () => {
    const r = await mixedRun({
      apps: sentinel.apps(),
      prefix: 'snd',
      inject: () => sentinel.failover(),
      stored: () => sentinel.storedItems(),
    });
    expect(r.deletes).toBeGreaterThan(0);
  }, 120_000);
});

describe('acknowledged gone means gone everywhere: Cluster content master killed while writes, patches and deletes run', () => {
  const cluster = replicasOnCluster();

  it("the content slot's master kill -9, a replica promoted, the old master back: nothing deleted served, nothing acknowledged lost", async () => {
    const r = await mixedRun({
      apps: cluster.apps(),
      prefix: 'cld',
      inject: () => cluster.failover(),
      stored: () => cluster.storedItems(),
    });
    expect(r.deletes).toBeGreaterThan(0);
  }, 120_000);
});
