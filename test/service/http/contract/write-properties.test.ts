import fc from 'fast-check';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../../helpers/app';
import { doc, invalid, resolve, valid, type Json } from '../../../helpers/openapi-arbitraries';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

/**
 * Property tests of the writes and the refusals every route shares, with requests generated from
 * the OpenAPI document and a valid bearer token (every answer is also proven against the document
 * by helpers/contract-setup.ts, so an undocumented status or body fails the request):
 * - POST ingest, ingest-batch, upload, chat and eval: every valid request gets a documented
 *   success or a documented refusal (422 for an item the schema of the document cannot refuse,
 *   such as an id colliding within a batch), never a 5xx; one field broken gets a 400 naming it
 *   (422 naming it for an item's own fields, as ingest reports every issue of an item);
 * - a body over MAX_BODY_SIZE: the documented 413, for every route that reads a body;
 * - with the ip tier exhausted: the documented 429 (RateLimited body, Retry-After) on every
 *   rate-limited operation, writes included.
 */
const TOKEN = 'write-properties-token-0123456789';
/** Small, so an oversize body is cheap to send. */
const MAX_BODY = 16 * 1024;
const RUNS = 12;

interface Post {
  readonly path: string;
  readonly op: Json;
  readonly contentType: string;
  readonly schema: Json;
}

const posts: Post[] = Object.entries(doc.paths).flatMap(([path, ops]) => {
  const body = (ops.post?.requestBody as { content: Record<string, { schema: Json }> } | undefined)?.content;
  if (!body || path === '/api/search') return [];
  const [contentType, { schema }] = Object.entries(body)[0];
  return [{ path, op: ops.post, contentType, schema }];
});
const statuses = (op: Json) => Object.keys(op.responses as Json).map(Number);

/** Sends `body` to `p` as its content type: JSON, or multipart with each `file` entry a JSON file of items. */
function send(app: TestApp['app'], p: Post, body: Json) {
  const req = request(app).post(p.path).set('Authorization', `Bearer ${TOKEN}`);
  if (p.contentType === 'application/json') return req.send(body);
  for (const [name, value] of Object.entries(body)) {
    if (name !== 'file') req.field(name, String(value));
    else (value as unknown[]).forEach((f, i) => req.attach('file', Buffer.from(JSON.stringify(f)), `items-${i}.json`));
  }
  return req;
}

/** The upload's files as the document describes them (binary strings) are, here, files of generated items. */
const bodyOf = (p: Post): fc.Arbitrary<Json> =>
  p.contentType === 'application/json'
    ? (valid(p.schema) as fc.Arbitrary<Json>)
    : fc.record(
        {
          file: fc.array(fc.array(valid(doc.components.schemas.ItemInput), { minLength: 1, maxLength: 2 }), {
            minLength: 1,
            maxLength: 2,
          }),
          type: valid(doc.components.schemas.ItemType),
        },
        { requiredKeys: ['file'] },
      );

describe('property tests of authenticated writes, 413 and 429 from the OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ service: { apiToken: TOKEN, maxBodyBytes: MAX_BODY }, rateLimit: { enabled: false } });
  });
  afterAll(() => t.close());

  it('covers every POST that reads a body but search (tested with the GETs)', () => {
    expect(posts.map((p) => p.path).sort()).toEqual([
      '/api/chat',
      '/api/eval',
      '/api/ingest',
      '/api/ingest-batch',
      '/api/upload',
      '/api/v1/chat',
    ]);
  });

  it.each(posts.map((p) => [p.path, p]))(
    'POST %s: valid requests → a documented success or refusal, never a 5xx',
    async (_path, p) => {
      const success = statuses(p.op).filter((s) => s < 300);
      const seen = new Set<number>();
      await fc.assert(
        fc.asyncProperty(bodyOf(p), async (body) => {
          const res = await send(t.app, p, body);
          seen.add(res.status);
          expect([...success, 422]).toContain(res.status);
          expect(statuses(p.op)).toContain(res.status);
        }),
        { numRuns: RUNS, seed: 25 },
      );
      // Not refusals all along: most generated requests are stored or answered.
      expect(success.some((s) => seen.has(s))).toBe(true);
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it.each(posts.map((p) => [p.path, p]))(
    'POST %s: one field broken → 400 naming it (422 for an item’s own fields)',
    async (_path, p) => {
      const sample = fc.sample(bodyOf(p), { numRuns: 1, seed: 25 })[0];
      const props = (resolve(p.schema).properties ?? {}) as Record<string, Json>;
      const item = p.path === '/api/ingest';
      let cases = 0;
      for (const [name, prop] of Object.entries(props)) {
        // A multipart field is a string: only what its string form breaks counts; of the files, their
        // count (none is under minItems); their contents are checked by the upload's own tests.
        const bad =
          p.contentType === 'application/json'
            ? invalid(prop)
            : name === 'file'
              ? [[]]
              : invalid(prop).filter((v) => typeof v === 'string');
        for (const value of bad) {
          const res = await send(t.app, p, { ...sample, [name]: value });
          cases++;
          const sent = JSON.stringify(value).slice(0, 30);
          // A value past its maximum length may also be past MAX_BODY_SIZE: then the 413 comes first.
          if (JSON.stringify(value).length > MAX_BODY)
            expect({ name, sent, status: res.status }).toEqual({ name, sent, status: 413 });
          else
            expect({ name, sent, status: res.status, field: String(res.body.field).split('.')[0] }).toEqual({
              name,
              sent,
              status: item ? 422 : 400,
              field: name,
            });
        }
      }
      expect(cases).toBeGreaterThan(0);
    },
  );

  it.each(posts.map((p) => [p.path, p]))(
    'POST %s: a body over MAX_BODY_SIZE → the documented 413, nothing stored',
    async (_path, p) => {
      const before = (await request(t.app).get('/api/v1/articles')).body.total as number;
      const big = 'x'.repeat(MAX_BODY + 1);
      const res = await send(
        t.app,
        p,
        p.contentType === 'application/json'
          ? { message: big, title: big, queries: big, items: big }
          : { file: [[{ type: 'article', title: 'Big', body: big }]] },
      );
      expect(res.status).toBe(413);
      expect(res.body.error).toMatch(/too_large/);
      expect((await request(t.app).get('/api/v1/articles')).body.total).toBe(before);
    },
  );

  it('POST /api/ingest-batch: more items than a batch holds (under MAX_BODY_SIZE) → the documented 413 naming items', async () => {
    const p = posts.find((x) => x.path === '/api/ingest-batch')!;
    const res = await send(t.app, p, { items: Array.from({ length: 1001 }, () => ({})) });
    expect({ status: res.status, field: res.body.field }).toEqual({ status: 413, field: 'items' });
  });
});

describe('every rate-limited operation answers the documented 429 once its tier is exhausted', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The ip tier admits a burst of 2 (scaled for the environment) and 1 an hour after; the test clock never moves.
    t = await buildTestApp({
      service: { apiToken: TOKEN, maxBodyBytes: MAX_BODY },
      rateLimit: { enabled: true, tiers: { ip: { limit: 1, windowSeconds: 3600, burst: 2 } } },
    });
  });
  afterAll(() => t.close());

  it(
    '429 with Retry-After and the RateLimited body, writes with a valid token included; the operational endpoints stay open',
    async () => {
      // The burst as scaled for the environment (development: × RATE_LIMIT_DEV_MULTIPLIER).
      for (let i = 0; i < t.settings.rateLimit.effective.tiers.ip.burst; i++)
        expect((await request(t.app).get('/api/search').query({ q: 'redis' })).status).toBe(200);
      const limited = Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => '429' in (op.responses as Json))
          .map(([method]) => ({ method, path })),
      );
      expect(limited.length).toBeGreaterThan(10);
      // Each operation with a request generated for it: its own body for the writes, `q` for the rest.
      const requests = fc.constantFrom(...limited).chain(({ method, path }) => {
        const p = method === 'post' ? posts.find((x) => x.path === path) : undefined;
        return (p ? bodyOf(p) : fc.constant({ q: 'redis' })).map((body) => ({ method, path, p, body }));
      });
      await fc.assert(
        fc.asyncProperty(requests, async ({ method, path, p, body }) => {
          const url = path.replace(/\{[^}]+\}/g, 'some-id');
          const res = p
            ? await send(t.app, p, body)
            : method === 'get'
              ? await request(t.app).get(url).query(body)
              : await request(t.app).post(url).set('Authorization', `Bearer ${TOKEN}`).send(body);
          expect({ path, status: res.status, error: res.body.error }).toEqual({
            path,
            status: 429,
            error: 'rate_limit_exceeded',
          });
          expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        }),
        { numRuns: 2 * limited.length, seed: 25 },
      );
      expect((await request(t.app).get('/health')).status).toBe(200);
    },
    PROPERTY_HANG_GUARD_MS,
  );
});
