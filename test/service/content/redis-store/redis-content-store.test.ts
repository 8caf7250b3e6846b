import Redis from 'ioredis';
import request from 'supertest';
import { RedisServer } from '../../../../tools/harness/redis';
import { pauseRedis, resumeRedis } from '../../../../tools/harness/redis-pause';
import type { RedisContentStore } from '../../../../service/content/redis-store/redis-content-store';
import { buildTestApp, type TestApp } from '../../../helpers/app';
import { captureLogger } from '../../ratelimit/helpers';
import type { FeatureSet } from '../../../../service/features';
import { wasParsed } from '../../../../service/content/lazy-item';

async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not met in time');
}

const item = (id: string, body: string) => ({ id, type: 'article', title: id, body });

describe('content in Redis (KVSTORE_URL), shared by replicas', () => {
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
    await a.deps.kvstore.client?.flushall().catch(() => undefined);
    await a.close();
    await b.close();
  });

  it('uses the Redis store', () => {
    expect((a.deps.features as FeatureSet).context.content.store.kind).toBe('kvstore');
  });

  it("a write on one replica shows up in the other replica's search and listings", async () => {
    const res = await request(a.app).post('/api/ingest').send(item('shared-note', 'Axolotls regrow limbs.'));
    expect(res.status).toBe(201);
    await eventually(async () => (await request(b.app).get('/api/search?q=axolotl')).body.total === 1);
    expect((await request(b.app).get('/api/v1/articles/shared-note')).body.body).toBe('Axolotls regrow limbs.');
    await request(b.app).post('/api/ingest').send(item('shared-note', 'Axolotls are salamanders.'));
    await eventually(
      async () => (await request(a.app).get('/api/v1/articles/shared-note')).body.body === 'Axolotls are salamanders.',
    );
    // Replacement invalidates the other replica's cache too.
    expect((await request(a.app).get('/api/search?q=salamanders')).body.total).toBe(1);
  });

  it('a new replica loads what is already there', async () => {
    await request(a.app)
      .post('/api/ingest-batch')
      .send({ items: [item('one', 'first'), item('two', 'second')] });
    const c = await buildTestApp({ service: { environment: 'testing' }, kvstore: { url: redis.url } });
    try {
      expect((await request(c.app).get('/api/v1/articles')).body.total).toBe(2);
      // Loaded and read packed, as the ContentStore contract says (the content service packs
      // nothing it loads; `wasParsed` is undefined for any other item).
      const { content } = (c.deps.features as FeatureSet).context;
      expect(content.all().map((i) => wasParsed(i) !== undefined)).toEqual([true, true]);
      expect((await content.store.getMany(['one', 'two'])).map((i) => wasParsed(i) !== undefined)).toEqual([
        true,
        true,
      ]);
    } finally {
      await c.close();
    }
  });

  it('keeps content under KVSTORE_KEY_PREFIX; replicas with another prefix do not share it', async () => {
    const input = {
      service: { environment: 'testing' as const },
      kvstore: { url: redis.url, keyPrefix: 'blog-a:content' },
      rateLimit: { enabled: false },
    };
    const c = await buildTestApp(input);
    const other = await buildTestApp({ ...input, kvstore: { ...input.kvstore, keyPrefix: 'blog-b' } });
    try {
      expect((await request(c.app).post('/api/ingest').send(item('prefixed', 'Quokkas smile.'))).status).toBe(201);
      const client = a.deps.kvstore.client!;
      expect(await client.hexists('blog-a:content:items', 'prefixed')).toBe(1);
      expect(await client.xlen('blog-a:content:changes')).toBe(1);
      expect(await client.exists('svc-ai-search:content:items', 'blog-b:items')).toBe(0);
      expect((await request(c.app).get('/api/search?q=quokka')).body.total).toBe(1);
      expect((await request(other.app).get('/api/v1/articles/prefixed')).status).toBe(404);
      // The default prefix, used by a and b, is untouched too.
      expect((await request(a.app).get('/api/v1/articles')).body.total).toBe(0);
    } finally {
      await c.close();
      await other.close();
    }
  });

  it('a write that times out on a paused Redis is a 503 "may or may not"; when Redis runs it later, both replicas index it', async () => {
    const storeOf = (t: TestApp) => (t.deps.features as FeatureSet).context.content.store as RedisContentStore;
    pauseRedis(redis);
    let first: request.Response;
    let second: request.Response;
    try {
      // Sent while the connection still looks healthy: the MULTI is on the wire, unanswered.
      first = await request(a.app).post('/api/ingest').send(item('paused-write', 'Tardigrades survive vacuum.'));
      await eventually(async () => a.deps.kvstore.state === 'unresponsive');
      // Once the pause is known, writes are refused before anything is sent.
      second = await request(a.app).post('/api/ingest').send(item('refused-write', 'Never stored.'));
    } finally {
      resumeRedis(redis);
    }
    expect(first.status).toBe(503);
    expect(first.body.error).toBe('store_unavailable');
    expect(first.body.message).toMatch(/may or may not have been stored; retrying is safe/);
    expect(first.body.stack).toBeUndefined();
    expect(second.status).toBe(503);
    expect(second.body).toMatchObject({ error: 'store_unavailable' });
    expect(second.body.message).toMatch(/not answering in time; nothing was stored/);
    // Redis ran the queued MULTI on resuming: the replica that answered 503 indexes it too.
    await eventually(async () => (await request(a.app).get('/api/search?q=tardigrade')).body.total === 1);
    await eventually(async () => (await request(b.app).get('/api/search?q=tardigrade')).body.total === 1);
    expect((await request(a.app).get('/api/v1/articles/paused-write')).status).toBe(200);
    expect(storeOf(a).unconfirmedWrites).toBe(0);
    expect(await a.deps.kvstore.client!.hexists('svc-ai-search:content:items', 'refused-write')).toBe(0);
    expect((await request(b.app).get('/api/v1/articles/refused-write')).status).toBe(404);
    // The retry the message invites replaces the item by id: still one item.
    await eventually(async () => a.deps.kvstore.available);
    const retry = await request(a.app).post('/api/ingest').send(item('paused-write', 'Tardigrades survive vacuum.'));
    expect(retry.status).toBe(201);
    expect((await request(a.app).get('/api/v1/articles')).body.total).toBe(1);
    await eventually(async () => (await request(b.app).get('/api/v1/articles')).body.total === 1);
  }, 40_000);

  it('a Redis that restarts empty is a warning: replicas keep their in-memory copy and write it back, a new replica loads it', async () => {
    const log = captureLogger('warn');
    const input = {
      service: { environment: 'testing' as const },
      kvstore: { url: redis.url },
      rateLimit: { enabled: false },
    };
    const c = await buildTestApp(input, { logger: log.logger });
    try {
      const batch = {
        items: [
          item('kept-one', 'Narwhals have tusks.'),
          item('kept-two', 'Capybaras are calm.'),
          item('kept-three', 'x'),
        ],
      };
      expect((await request(a.app).post('/api/ingest-batch').send(batch)).status).toBe(201);
      await eventually(async () => (await request(c.app).get('/api/v1/articles')).body.total === 3);
      await redis.kill();
      await redis.restart();
      // Every replica finds the loss on its resync and writes its copy back (HSETNX).
      const raw = new Redis(redis.url);
      try {
        await eventually(async () => (await raw.hlen('svc-ai-search:content:items')) === 3, 20_000);
      } finally {
        raw.disconnect();
      }
      // Which replica writes each item back first is a race; the one whose HSETNX wrote it counts
      // it, so summed over the replicas store_losses is exactly the three items lost.
      const losses = async () => {
        let items = 0;
        for (const t of [a, b, c]) items += (await request(t.app).get('/health')).body.content?.store_losses.items ?? 0;
        return items;
      };
      await eventually(async () => (await losses()) === 3, 20_000);
      for (const t of [a, b, c]) {
        expect((await request(t.app).get('/api/v1/articles')).body.total).toBe(3);
        expect((await request(t.app).get('/api/search?q=narwhal')).body.total).toBe(1);
      }
      const health = (await request(c.app).get('/health')).body;
      expect(health.content).toMatchObject({ store: 'kvstore', items: 3 });
      // c's log (the one captured) warns when c wrote items back itself.
      const warnings = log
        .at(40)
        .filter((l) => typeof l.msg === 'string' && l.msg.includes('lost items this replica holds'));
      if (health.content.store_losses.items > 0) {
        expect(warnings[0]).toMatchObject({
          held_items: 3,
          store_items: expect.any(Number),
          lost_items: expect.any(Number),
        });
      } else expect(warnings).toEqual([]);
      await new Promise((r) => setTimeout(r, 300));
      expect(await losses()).toBe(3);
      // A replica started after the loss loads what was written back.
      const d = await buildTestApp(input);
      try {
        expect((await request(d.app).get('/api/v1/articles')).body.total).toBe(3);
      } finally {
        await d.close();
      }
    } finally {
      await c.close();
    }
  }, 60_000);

  it('a Redis that comes back without a write it acknowledged but with the epoch marker (an older snapshot, or a failover to a replica that lagged) is caught at the reconnect: the write is written back', async () => {
    // What a Sentinel or Cluster failover to a replica that had not yet received the last writes
    // looks like to a replica of the service: the connection drops, and the server that answers
    // after it holds the marker (replicated long ago) but not those writes. ioredis re-sends the
    // blocked XREAD after the reconnect, so only the dropped connection can tell.
    const raw = new Redis(redis.url);
    try {
      expect(
        (await request(a.app).post('/api/ingest').send(item('in-snapshot', 'Tenrecs are not hedgehogs.'))).status,
      ).toBe(201);
      await raw.save();
      expect(
        (await request(b.app).post('/api/ingest').send(item('after-snapshot', 'Solenodons are venomous.'))).status,
      ).toBe(201);
      await eventually(async () => (await request(a.app).get('/api/v1/articles/after-snapshot')).status === 200);
      await redis.kill();
      await redis.restart();
      // The restarted server loaded the snapshot: the marker and the first item, not the second.
      raw.disconnect();
      const back = new Redis(redis.url);
      try {
        await eventually(
          async () => (await back.hexists('svc-ai-search:content:items', 'after-snapshot')) === 1,
          20_000,
        );
        expect(await back.hexists('svc-ai-search:content:items', 'in-snapshot')).toBe(1);
      } finally {
        back.disconnect();
      }
      let losses = 0;
      for (const t of [a, b]) losses += (await request(t.app).get('/health')).body.content.store_losses.items as number;
      expect(losses).toBe(1);
      const c = await buildTestApp({
        service: { environment: 'testing' },
        kvstore: { url: redis.url },
        rateLimit: { enabled: false },
      });
      try {
        expect((await request(c.app).get('/api/v1/articles/after-snapshot')).status).toBe(200);
      } finally {
        await c.close();
      }
    } finally {
      raw.disconnect();
    }
  }, 40_000);

  it('CLIENT KILL of every connection while writers run: nothing acknowledged is forgotten, store_losses stays 0', async () => {
    const acked: Array<[TestApp, string]> = [];
    let stop = false;
    const writer = async (t: TestApp, name: string) => {
      for (let i = 0; !stop; i++) {
        const r = await request(t.app)
          .post('/api/ingest')
          .send(item(`${name}-${i}`, `note ${name} ${i}`));
        if (r.status === 201) acked.push([t, `${name}-${i}`]);
      }
    };
    // Enough content that each reload's scan takes a while, with writes landing during it.
    const bulk = Array.from({ length: 4000 }, (_, i) => item(`bulk-${i}`, `bulk ${i}`));
    for (let i = 0; i < bulk.length; i += 1000)
      expect(
        (
          await request(a.app)
            .post('/api/ingest-batch')
            .send({ items: bulk.slice(i, i + 1000) })
        ).status,
      ).toBe(201);
    const writers = [a, b, a, b, a, b, a, b].map((t, n) => writer(t, `w${n}`));
    try {
      await eventually(async () => acked.length >= 20);
      const admin = new Redis(redis.url);
      try {
        for (let k = 0; k < 5; k++) {
          await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
          await new Promise((r) => setTimeout(r, 300));
        }
      } finally {
        admin.disconnect();
      }
      const before = acked.length;
      await eventually(async () => acked.length >= before + 20, 20_000);
    } finally {
      // Stopped on a failure too, or the writers would keep jest from exiting.
      stop = true;
      await Promise.all(writers);
    }
    // Each replica serves what it acknowledged at once, and every acknowledged item once caught up.
    for (const [t, id] of acked) expect((t.deps.features as FeatureSet).context.content.get(id)?.id).toBe(id);
    // Once caught up, each replica serves exactly what Redis holds: every acknowledged item, plus
    // any write answered 503 "may or may not" that did run.
    const held = await a.deps.kvstore.client!.hlen('svc-ai-search:content:items');
    expect(held).toBeGreaterThanOrEqual(acked.length + bulk.length);
    for (const t of [a, b]) {
      await eventually(async () => (t.deps.features as FeatureSet).context.content.size === held, 20_000);
      for (const [, id] of acked) expect((t.deps.features as FeatureSet).context.content.get(id)?.id).toBe(id);
      expect((await request(t.app).get('/health')).body.content.store_losses).toEqual({ events: 0, items: 0 });
    }
  }, 40_000);

  it('a FLUSHALL while connected (no restart, no dropped connection) is found by the epoch check, warned about and repaired', async () => {
    const log = captureLogger('warn');
    const c = await buildTestApp(
      { service: { environment: 'testing' }, kvstore: { url: redis.url }, rateLimit: { enabled: false } },
      { logger: log.logger },
    );
    try {
      expect((await request(a.app).post('/api/ingest').send(item('flushed', 'Okapis are shy.'))).status).toBe(201);
      await eventually(async () => (await request(c.app).get('/api/v1/articles/flushed')).status === 200);
      const client = a.deps.kvstore.client!;
      await client.flushall();
      // A write after the flush must not hide the loss (the marker, not the hash's existence, tells).
      expect((await request(b.app).post('/api/ingest').send(item('after-flush', 'Quolls are spotted.'))).status).toBe(
        201,
      );
      await eventually(async () => (await client.hexists('svc-ai-search:content:items', 'flushed')) === 1, 20_000);
      // Every replica notices the loss; which one writes the lost item back first (and so warns
      // about lost items rather than finding them back already) is a race between the three.
      await eventually(async () => log.at(40).some((l) => String(l.msg).includes('lost its content')), 20_000);
      for (const t of [a, b, c])
        await eventually(async () => (await request(t.app).get('/api/v1/articles')).body.total === 2);
    } finally {
      await c.close();
    }
  }, 40_000);

  it('a write that arrives while the write connection is still connecting waits for it instead of answering 503', async () => {
    const store = (a.deps.features as FeatureSet).context.content.store as RedisContentStore;
    // The write connection opens after the first load, so a replica that just started (or one
    // whose write connection was closed) has it connecting when the first write arrives.
    const writer = (
      store as unknown as { writer: { disconnect(): void; once(e: string, f: () => void): void; status: string } }
    ).writer;
    const ended = new Promise<void>((resolve) => writer.once('end', resolve));
    writer.disconnect();
    await ended;
    const res = await request(a.app).post('/api/ingest').send(item('while-connecting', 'Tapirs swim.'));
    expect(res.status).toBe(201);
    expect(writer.status).toBe('ready');
    await eventually(async () => (await request(b.app).get('/api/v1/articles/while-connecting')).status === 200);
  });

  it('writing lost items back never overwrites a newer write (HSETNX)', async () => {
    const storeOf = (t: TestApp) => (t.deps.features as FeatureSet).context.content.store as RedisContentStore;
    expect((await request(a.app).post('/api/ingest').send(item('raced', 'old copy'))).status).toBe(201);
    const old = (await request(a.app).get('/api/v1/articles/raced')).body;
    expect((await request(b.app).post('/api/ingest').send(item('raced', 'new copy'))).status).toBe(201);
    await storeOf(a).restore([old, { ...old, id: 'was-lost' }]);
    const client = a.deps.kvstore.client!;
    expect(JSON.parse((await client.hget('svc-ai-search:content:items', 'raced'))!).body).toBe('new copy');
    expect(JSON.parse((await client.hget('svc-ai-search:content:items', 'was-lost'))!).body).toBe('old copy');
    // The notice makes the other replica pick up what was written back.
    await eventually(async () => (await request(b.app).get('/api/v1/articles/was-lost')).status === 200);
  });

  it('while Redis is down, writes get 503 JSON and reads and search keep working; then writes resume', async () => {
    await request(a.app).post('/api/ingest').send(item('before-outage', 'Pangolins have scales.'));
    await eventually(async () => (await request(b.app).get('/api/search?q=pangolin')).body.total === 1);
    await redis.kill();
    await eventually(async () => !a.deps.kvstore.available);
    const write = await request(a.app).post('/api/ingest').send(item('during-outage', 'x'));
    expect(write.status).toBe(503);
    expect(write.body).toMatchObject({ error: 'store_unavailable' });
    expect(write.body.message).toMatch(/unreachable/);
    expect((await request(a.app).get('/api/search?q=pangolin')).body.total).toBe(1);
    expect((await request(b.app).get('/api/v1/articles/before-outage')).status).toBe(200);
    await redis.restart();
    await eventually(async () => a.deps.kvstore.available && b.deps.kvstore.available);
    // The restarted Redis is empty (no persistence in tests): writes work again and reach b.
    await eventually(
      async () =>
        (await request(a.app).post('/api/ingest').send(item('after-outage', 'Okapis are shy.'))).status === 201,
    );
    await eventually(async () => (await request(b.app).get('/api/search?q=okapi')).body.total === 1);
  }, 30_000);
});
