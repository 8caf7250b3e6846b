import Redis from 'ioredis';
import request from 'supertest';
import { RedisServer } from '../../../../tools/harness/redis';
import type { RedisContentStore } from '../../../../service/content/redis-store/redis-content-store';
import type { FeatureSet } from '../../../../service/features';
import { buildTestApp, type TestApp } from '../../../helpers/app';

const DELETED = 'svc-ai-search:content:deleted';
const REVIVED = 'svc-ai-search:content:revived';
const ITEMS = 'svc-ai-search:content:items';

async function eventually(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not met in time');
}

const content = (t: TestApp) => (t.deps.features as FeatureSet).context.content;
const storeOf = (t: TestApp) => content(t).store as RedisContentStore;
const item = (id: string, body = `note ${id}`) => ({ id, type: 'article' as const, title: id, body });

/** Tombstones on a real redis-server (redis-scripts.ts): stamps, re-adds, write-backs, compaction. */
describe('deletes in the Redis content store (tombstones)', () => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis.stop();
  });
  beforeEach(async () => {
    const input = {
      service: { environment: 'testing' as const },
      kvstore: { url: redis.url },
      rateLimit: { enabled: false },
    };
    a = await buildTestApp(input);
    b = await buildTestApp(input);
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    const raw = new Redis(redis.url);
    await raw.flushall();
    raw.disconnect();
  });

  it("a deletion's stamp is never older than the version it deleted (the deleting replica's clock behind)", async () => {
    a.clock.set(Date.UTC(2026, 5, 1, 12, 30, 45, 678));
    await content(a).ingest([item('ahead')]);
    await eventually(() => content(b).get('ahead') !== undefined);
    b.clock.set(Date.UTC(2026, 0, 1));
    await content(b).write({ delete: ['ahead'] });
    const raw = a.deps.kvstore.client!;
    // Read from the stored record's updated_at by the script (days from civil, in Lua).
    expect(Number(await raw.zscore(DELETED, 'ahead'))).toBe(Date.UTC(2026, 5, 1, 12, 30, 45, 678));
    await eventually(() => content(a).get('ahead') === undefined);
    expect((await request(a.app).get('/api/v1/articles/ahead')).status).toBe(404);
    expect(await raw.hexists(ITEMS, 'ahead')).toBe(0);
  });

  it('a delete then a write of the same id: served again, the tombstone recorded as superseded', async () => {
    await content(a).ingest([item('again', 'first')]);
    await content(a).write({ delete: ['again'] });
    a.clock.advance(1000);
    await content(b).ingest([item('again', 'second')]);
    const raw = a.deps.kvstore.client!;
    expect(await raw.zscore(DELETED, 'again')).toBeNull();
    expect(await raw.zscore(REVIVED, 'again')).not.toBeNull();
    await eventually(() => content(a).get('again')?.body === 'second');
    // A's remembered deletion, written back at a reload, leaves the newer write alone.
    expect(await storeOf(a).load()).toHaveLength(1);
    expect(JSON.parse((await raw.hget(ITEMS, 'again'))!).body).toBe('second');
  });

  it('a write-back never resurrects a deleted id: restore reports it deleted, writes only what was lost', async () => {
    await content(a).ingest([item('gone'), item('lost')]);
    const old = content(a).get('gone')!;
    const lost = content(a).get('lost')!;
    await content(b).write({ delete: ['gone'] });
    const raw = a.deps.kvstore.client!;
    await raw.hdel(ITEMS, 'lost');
    const outcome = await storeOf(a).restore([old, lost]);
    expect(outcome).toEqual({ written: ['lost'], deleted: ['gone'] });
    expect(await raw.hexists(ITEMS, 'gone')).toBe(0);
    expect(await raw.hexists(ITEMS, 'lost')).toBe(1);
  });

  it("an id deleted behind a replica's back while its connections are killed: dropped (by the notice or by the reload's tombstone), no loss counted", async () => {
    await content(a).ingest([item('missed')]);
    await eventually(() => content(b).get('missed') !== undefined);
    // Deleted through the store alone (a's copy is not told), while every connection is killed.
    await storeOf(a).write([], ['missed']);
    await b.deps.kvstore.client!.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await eventually(() => content(b).get('missed') === undefined, 20_000);
    expect((await request(b.app).get('/health')).body.content.store_losses).toEqual({ events: 0, items: 0 });
  });

  it('tombstones past the retention are compacted by the next write that deletes', async () => {
    const raw = a.deps.kvstore.client!;
    await raw.zadd(DELETED, a.clock.now() - 8 * 24 * 3600 * 1000, 'ancient');
    await content(a).ingest([item('fresh')]);
    await content(a).write({ delete: ['fresh'] });
    expect(await raw.zscore(DELETED, 'ancient')).toBeNull();
    expect(await raw.zscore(DELETED, 'fresh')).not.toBeNull();
  });
});
