import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { SettingsInput } from '../../../configs';
import type { ItemVectors, VectorFeed } from '../../../service/embeddings';
import type { FeatureSet } from '../../../service/features';
import { itemFingerprint } from '../../../service/content/item-fingerprint';
import type { Item } from '../../../service/content/item';
import { FakeOpenAi } from '../../../tools/harness/fake-openai';
import { FileVectorLog } from '../../../service/content/file-store/vector-log';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { redisServerForSuite } from '../../helpers/redis-server';

/**
 * The content side of search by meaning (issue 41): client vectors on items, vectors stored with
 * the items (file store and Redis) and read at restart instead of embedding again, the worker that
 * embeds each item version once across replicas, and its backlog through a provider outage. Real
 * apps (in process), a real redis-server; only the embeddings provider is the harness's fake.
 */

const DIMS = 8;

// A hang guard only (issue 36): every wait below polls for a state, none measures time; the
// worker's backoff is at most 200 ms here (EMBEDDINGS_RETRY_MAX_WAIT_MS).
jest.setTimeout(120_000);

function feedOf(t: TestApp): VectorFeed {
  return (t.deps.features as FeatureSet).vectors.feed;
}

/** Polls `ok` until it holds. The jest timeout is the hang guard; nothing here measures time. */
async function until(ok: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await ok())) await new Promise((r) => setTimeout(r, 20));
}

function metric(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? 'NaN');
}

/** The texts the fake was asked to embed so far (every input of every request). */
function inputs(fake: FakeOpenAi): string[] {
  return fake.requests
    .filter((r) => r.path === '/v1/embeddings')
    .flatMap((r) => (Array.isArray(r.body.input) ? r.body.input : [r.body.input]).map(String));
}

function held(feed: VectorFeed): Map<string, ItemVectors> {
  return new Map([...feed.current()].map((v) => [v.id, v]));
}

const vec = (x: number) => Array.from({ length: DIMS }, (_, k) => (k === 0 ? x : 0.5));

describe('client vectors: validation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ service: { environment: 'testing' }, embeddings: { dimensions: DIMS } });
  });
  afterAll(() => t.close());

  const item = { type: 'article', title: 'Vectors', body: 'b' };

  it.each([
    ['the wrong length', JSON.stringify({ ...item, vector: [1, 2, 3] })],
    ['a non-finite number', JSON.stringify({ ...item, vector: vec(1) }).replace('[1,', '[1e999,')],
    ['a string', JSON.stringify({ ...item, vector: ['1', ...vec(1).slice(1)] })],
    ['not an array', JSON.stringify({ ...item, vector: 3 })],
  ])('ingest refuses a vector of %s: 422 naming vector', async (_what, body) => {
    const res = await request(t.app).post('/api/ingest').set('content-type', 'application/json').send(body);
    expect(res.status).toBe(422);
    expect(res.body.field).toBe('vector');
  });

  it('a batch names the item and the field; a patch names patch.k.vector', async () => {
    const batch = await request(t.app)
      .post('/api/ingest-batch')
      .send({
        items: [
          { ...item, id: 'ok-one' },
          { ...item, id: 'bad-one', vector: [1] },
        ],
      });
    expect(batch.status).toBe(207);
    expect(batch.body.results.find((r: { index: number }) => r.index === 1).field).toBe('vector');
    const patch = await request(t.app)
      .post('/api/ingest-batch')
      .send({ patch: [{ id: 'ok-one', vector: [1, 2] }] });
    expect(patch.status).toBe(422);
    expect(patch.body.field).toBe('patch.0.vector');
  });

  it('an upload (NDJSON) refuses a wrong vector naming it; a right one is stored and shown by GET, not by listings', async () => {
    const bad = await request(t.app)
      .post('/api/upload')
      .attach('file', Buffer.from(JSON.stringify({ ...item, id: 'up-bad', vector: [1] }) + '\n'), 'v.ndjson');
    expect(bad.status).toBe(422);
    expect(bad.body.field).toBe('vector');
    const good = await request(t.app)
      .post('/api/upload')
      .attach('file', Buffer.from(JSON.stringify({ ...item, id: 'up-good', vector: vec(0.25) }) + '\n'), 'v.ndjson');
    expect(good.status).toBe(201);
    expect((await request(t.app).get('/api/v1/articles/up-good')).body.vector).toEqual(vec(0.25));
    const list = await request(t.app).get('/api/v1/articles');
    expect(list.body.items.find((i: { id: string }) => i.id === 'up-good')).not.toHaveProperty('vector');
  });
});

describe('vectors in the file store (DATA_DIR)', () => {
  let fake: FakeOpenAi;
  let dataDir: string;
  beforeAll(async () => {
    fake = await FakeOpenAi.start();
    dataDir = mkdtempSync(join(tmpdir(), 'vectors-file-'));
  });
  afterAll(async () => {
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const settings = (provider: 'none' | 'openai'): SettingsInput => ({
    service: { environment: 'testing', dataDir },
    embeddings: {
      provider,
      baseUrl: fake.url,
      dimensions: DIMS,
      sendDimensions: true,
      maxRetries: 0,
      retryMaxWaitMs: 100,
    },
  });

  it('without an embedder, a client vector is the item`s vectors (source client), and survives a restart', async () => {
    const t = await buildTestApp(settings('none'));
    try {
      const res = await request(t.app)
        .post('/api/ingest')
        .send({ id: 'own', type: 'article', title: 'Own vector', body: 'x', vector: vec(1) });
      expect(res.status).toBe(201);
      const feed = feedOf(t);
      await until(() => held(feed).has('own'));
      expect(held(feed).get('own')!.source).toBe('client');
      expect([...held(feed).get('own')!.vectors[0]]).toEqual(vec(1));
      expect(feed.pending()).toBe(0);
      expect(feed.status()).toBe('ok');
    } finally {
      await t.close();
    }
    const again = await buildTestApp(settings('none'));
    try {
      expect(held(feedOf(again)).get('own')?.source).toBe('client');
    } finally {
      await again.close();
    }
  });

  it('a reload (a resync) matches the items with their records in steps, without building a listing (no sort of every item)', async () => {
    const own = mkdtempSync(join(tmpdir(), 'vectors-reload-'));
    const t = await buildTestApp({ ...settings('none'), service: { environment: 'testing', dataDir: own } });
    try {
      const items = Array.from({ length: 300 }, (_, n) => ({
        id: `r${n}`,
        type: 'article',
        title: `Item ${n}`,
        body: 'x',
        vector: vec(n + 1),
      }));
      expect((await request(t.app).post('/api/ingest-batch').send({ items })).status).toBe(201);
      const feed = feedOf(t);
      await until(() => held(feed).size === 300);
      const content = (t.deps.features as FeatureSet).context.content;
      const listed = jest.spyOn(content, 'all');
      await (feed as unknown as { reload(): Promise<void> }).reload();
      expect(listed).not.toHaveBeenCalled();
      expect(held(feed).get('r7')?.vectors[0][0]).toBe(8);
      expect(held(feed).size).toBe(300);
    } finally {
      await t.close();
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('without an embedder, items with no vector of their own never reach the worker (a batch of them costs it nothing)', async () => {
    // A folder of its own: the next tests count what the provider is asked for in theirs.
    const own = mkdtempSync(join(tmpdir(), 'vectors-plain-'));
    const t = await buildTestApp({ ...settings('none'), service: { environment: 'testing', dataDir: own } });
    // Calls through: the worker's store reads, by the ids it was given.
    const spy = jest.spyOn(FileVectorLog.prototype, 'getMany');
    try {
      const items = Array.from({ length: 200 }, (_, i) => ({
        id: `plain-${i}`,
        type: 'article',
        title: `Plain ${i}`,
        body: 'x',
      }));
      items.push({ id: 'mine', type: 'article', title: 'Mine', body: 'x', vector: vec(2) } as (typeof items)[number]);
      expect((await request(t.app).post('/api/ingest-batch').send({ items })).status).toBe(201);
      const feed = feedOf(t);
      await until(() => held(feed).has('mine'));
      expect(spy.mock.calls.flatMap(([ids]) => ids)).toEqual(['mine']);
    } finally {
      spy.mockRestore();
      await t.close();
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('with an embedder, items are embedded once, the tokens billed are counted, and a restart reads the vectors back without a provider call', async () => {
    fake.reset();
    const t = await buildTestApp(settings('openai'));
    const body = 'The automobile was parked by the sea. It had four wheels.';
    try {
      const before = metric(
        (await request(t.app).get('/api/metrics/prometheus')).text,
        'svc_ai_search_total_tokens_used',
      );
      for (const id of ['car-one', 'car-two', 'car-three'])
        expect((await request(t.app).post('/api/ingest').send({ id, type: 'article', title: id, body })).status).toBe(
          201,
        );
      const feed = feedOf(t);
      await until(() => ['car-one', 'car-two', 'car-three'].every((id) => held(feed).has(id)));
      expect(feed.pending()).toBe(0);
      expect(feed.status()).toBe('ok');
      const v = held(feed).get('car-one')!;
      expect(v.source).toBe(`text-embedding-3-small/${DIMS}`);
      expect(v.vectors[0]).toHaveLength(DIMS);
      // Each item once: one passage each (a short body), nothing asked twice.
      expect(inputs(fake)).toHaveLength(3);
      const after = metric(
        (await request(t.app).get('/api/metrics/prometheus')).text,
        'svc_ai_search_total_tokens_used',
      );
      expect(fake.embeddingTokensBilled).toBeGreaterThan(0);
      expect(after - before).toBe(fake.embeddingTokensBilled);
      expect(
        metric((await request(t.app).get('/api/metrics/prometheus')).text, 'svc_ai_search_embeddings_pending'),
      ).toBe(0);
    } finally {
      await t.close();
    }
    const asked = inputs(fake).length;
    const again = await buildTestApp(settings('openai'));
    try {
      const feed = feedOf(again);
      expect([...held(feed).keys()].sort()).toEqual(['car-one', 'car-three', 'car-two', 'own']);
      expect(feed.pending()).toBe(0);
      expect(inputs(fake)).toHaveLength(asked);
    } finally {
      await again.close();
    }
  });

  it('a batch the provider refuses (a 400) is embedded an item at a time, so one bad item does not hold up the rest', async () => {
    fake.reset();
    fake.enqueueEmbeddings({ kind: 'status', status: 400, body: '{"error":{"message":"bad input"}}' });
    const t = await buildTestApp(settings('openai'));
    try {
      const items = ['one', 'two', 'three'].map((w) => ({
        id: `solo-${w}`,
        type: 'article',
        title: `Solo ${w}`,
        body: w,
      }));
      expect((await request(t.app).post('/api/ingest-batch').send({ items })).status).toBe(201);
      const feed = feedOf(t);
      await until(() => items.every((i) => held(feed).has(i.id)));
      expect(feed.pending()).toBe(0);
      const calls = fake.requests.filter((r) => r.path === '/v1/embeddings').map((r) => [r.body.input].flat().length);
      expect(calls).toEqual([3, 1, 1, 1]);
    } finally {
      await t.close();
    }
  });
});

describe('vectors in Redis, two replicas', () => {
  const redis = redisServerForSuite();
  let fake: FakeOpenAi;
  let a: TestApp;
  let b: TestApp;
  const settings = (): SettingsInput => ({
    service: { environment: 'testing' },
    kvstore: { url: redis.server.url },
    embeddings: {
      provider: 'openai',
      baseUrl: fake.url,
      dimensions: DIMS,
      sendDimensions: true,
      maxRetries: 0,
      retryMaxWaitMs: 200,
    },
  });
  beforeAll(async () => {
    fake = await FakeOpenAi.start();
    a = await buildTestApp(settings());
    b = await buildTestApp(settings());
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await fake.close();
  });

  const ids = Array.from({ length: 12 }, (_, k) => `doc-${k}`);
  const body = (k: number) => `Document ${k} is about a large house near the ocean.`;

  it('each item version is embedded exactly once across the replicas, and each replica`s feed holds every item`s vectors', async () => {
    fake.reset();
    // Half written through each replica, at once.
    await Promise.all(
      ids.map((id, k) =>
        request(k % 2 ? a.app : b.app)
          .post('/api/ingest')
          .send({ id, type: 'article', title: `Doc ${k}`, body: body(k) })
          .expect(201),
      ),
    );
    await until(() => ids.every((id) => held(feedOf(a)).has(id) && held(feedOf(b)).has(id)));
    // One passage an item, each asked for once by one replica or the other.
    const asked = inputs(fake);
    expect(asked).toHaveLength(ids.length);
    expect(new Set(asked).size).toBe(ids.length);
    expect(feedOf(a).pending()).toBe(0);
    expect(feedOf(b).pending()).toBe(0);
    for (const id of ids) expect(held(feedOf(b)).get(id)!.fingerprint).toBe(held(feedOf(a)).get(id)!.fingerprint);
  });

  it('a third replica (a restart) reads the vectors from Redis without a provider call', async () => {
    const before = inputs(fake).length;
    const c = await buildTestApp(settings());
    try {
      expect(ids.every((id) => held(feedOf(c)).has(id))).toBe(true);
      expect(feedOf(c).pending()).toBe(0);
      expect(inputs(fake)).toHaveLength(before);
    } finally {
      await c.close();
    }
  });

  it('a delete removes the vectors (feed.remove, and from Redis); a patch of the text embeds again, one of the tags only does not', async () => {
    const removed: string[] = [];
    const put: string[] = [];
    const off = feedOf(b).subscribe({ put: (v) => put.push(...v.map((x) => x.id)), remove: (r) => removed.push(...r) });
    try {
      const del = await request(a.app)
        .post('/api/ingest-batch')
        .send({ delete: ['doc-0'] });
      expect(del.status).toBe(200);
      await until(() => !held(feedOf(a)).has('doc-0') && removed.includes('doc-0'));
      expect(await redis.client.hexists('svc-ai-search:content:vectors', 'doc-0')).toBe(0);

      let before = inputs(fake).length;
      const oldFp = held(feedOf(a)).get('doc-1')!.fingerprint;
      const tags = await request(a.app)
        .post('/api/ingest-batch')
        .send({ patch: [{ id: 'doc-1', tags: ['renamed'] }] });
      expect(tags.status).toBe(200);
      await until(() => {
        const v = held(feedOf(b)).get('doc-1');
        return v !== undefined && v.fingerprint !== oldFp;
      });
      expect(inputs(fake)).toHaveLength(before);

      before = inputs(fake).length;
      const text = await request(b.app)
        .post('/api/ingest-batch')
        .send({ patch: [{ id: 'doc-2', body: 'Now it speaks of a quick film.' }] });
      expect(text.status).toBe(200);
      const fp = () => held(feedOf(a)).get('doc-2')?.fingerprint;
      await until(() => fp() !== undefined && feedOf(a).pending() === 0 && feedOf(b).pending() === 0);
      expect(inputs(fake).slice(before)).toEqual(['Doc 2\nNow it speaks of a quick film.']);
      expect(held(feedOf(b)).get('doc-2')!.fingerprint).toBe(fp());
    } finally {
      off();
    }
  });

  it('with the provider failing, writes answer 201 and the backlog grows (degraded); once it answers again the backlog drains to 0', async () => {
    fake.embeddingFallback = { kind: 'status', status: 503 };
    try {
      for (let k = 0; k < 4; k++)
        expect(
          (
            await request(a.app)
              .post('/api/ingest')
              .send({ id: `late-${k}`, type: 'article', title: `Late ${k}`, body: 'Waits for the provider.' })
          ).status,
        ).toBe(201);
      await until(() => feedOf(a).status() === 'degraded' || feedOf(b).status() === 'degraded');
      expect(feedOf(a).pending()).toBeGreaterThanOrEqual(4);
      const gauge = metric(
        (await request(a.app).get('/api/metrics/prometheus')).text,
        'svc_ai_search_embeddings_pending',
      );
      expect(gauge).toBeGreaterThanOrEqual(4);
      // Keyword search serves them at once.
      expect((await request(a.app).get('/api/search?q=provider')).body.results.length).toBeGreaterThanOrEqual(4);
    } finally {
      fake.embeddingFallback = { kind: 'vectors' };
    }
    await until(() => feedOf(a).pending() === 0 && feedOf(b).pending() === 0);
    expect(feedOf(a).status()).toBe('ok');
    for (let k = 0; k < 4; k++) expect(held(feedOf(b)).has(`late-${k}`)).toBe(true);
  });

  it('a claim left by a replica that crashed holds the item off until its lease ends; then another replica embeds it', async () => {
    fake.embeddingFallback = { kind: 'status', status: 503 };
    let item: Item;
    try {
      const res = await request(a.app)
        .post('/api/ingest')
        .send({ id: 'orphan', type: 'article', title: 'Orphan', body: 'A kid with a big dwelling.' });
      expect(res.status).toBe(201);
      item = res.body as Item;
      await until(() => feedOf(a).status() === 'degraded' || feedOf(b).status() === 'degraded');
      // What a replica that claimed this version and then died leaves: its claim, with a lease.
      const claim = `svc-ai-search:content:vclaim:orphan:${itemFingerprint(item)}`;
      // (Taken when no replica holds it: one retrying against the failing provider holds it for a moment.)
      await until(async () => (await redis.client.set(claim, 'crashed-replica', 'PX', 1500, 'NX')) === 'OK');
    } finally {
      fake.embeddingFallback = { kind: 'vectors' };
    }
    const before = inputs(fake).length;
    await until(() => held(feedOf(a)).has('orphan') && held(feedOf(b)).has('orphan'));
    expect(inputs(fake).slice(before)).toEqual(['Orphan\nA kid with a big dwelling.']);
  });
});
