import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { RedisServer } from '../../tools/harness/redis';
import { hostileTexts } from '../helpers/hostile-text';
import { ServiceProcess } from '../../tools/harness/service-process';
import { malformedAnswer } from './answers';
import { WIDE_LIMITS, hostileEnv } from './hostile-env';
import { watchLiveness } from './liveness';
import { PROPERTY_HANG_GUARD_MS } from '../helpers/property';

/**
 * A generated fuzz pass over every route of the real service process (production settings,
 * file store, rate limits in a real Redis): random methods, paths, headers, bodies and encodings.
 * Throughout, the process stays up, every answer is a well-formed JSON error or success, no
 * answer is a 500, and `/health/live` answers within 1 s.
 */

const TOKEN = 'fuzz-token';
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

const ROUTES = [
  '/api/search',
  '/api/ingest',
  '/api/ingest-batch',
  '/api/upload',
  '/api/v1/articles',
  '/api/v1/articles/some-id',
  '/api/v1/projects',
  '/api/v1/projects/x',
  '/api/v1/experiences',
  '/api/v1/experiences/none',
  '/api/chat',
  '/api/v1/chat',
  '/api/export/all.json',
  '/api/export/articles.csv',
  '/api/export/all.md',
  '/api/eval',
  '/api/metrics',
  '/api/metrics/prometheus',
  '/health',
  '/health/live',
  '/health/ready',
  '/',
  '/nope',
];

const pathArb = fc.oneof(
  fc.constantFrom(...ROUTES),
  fc
    .tuple(
      fc.constantFrom(...ROUTES),
      fc.constantFrom(
        '%',
        '%zz',
        '%E0%A4%A',
        '%00',
        '/..%2f..%2fetc%2fpasswd',
        '/',
        '//',
        '/%2e%2e',
        '?',
        '#x',
        ';a=b',
        '\u00e9',
        '%C0%AF',
      ),
    )
    .map(([r, s]) => encodeURI(r + s).replace(/%25/g, '%')),
  fc.tuple(fc.constantFrom(...ROUTES), fc.string({ maxLength: 40 })).map(([r, s]) => `${r}/${encodeURIComponent(s)}`),
  fc
    .tuple(
      fc.constantFrom(...ROUTES),
      fc.dictionary(
        fc.constantFrom('q', 'type', 'tag', 'limit', 'offset', 'k', '__proto__', 'constructor'),
        fc.string({ maxLength: 30 }),
        { maxKeys: 4 },
      ),
    )
    .map(([r, q]) => `${r}?${new URLSearchParams(q).toString()}`),
  fc.constantFrom(
    '/API/SEARCH?q=a',
    '/api/search?q=' + 'a '.repeat(300),
    '/api/search?limit=-1&offset=1e309',
    '/api/v1/articles/' + 'a'.repeat(5000),
    '/api/search?q[]=a&q[]=b',
    '/api/search?q[$gt]=1',
  ),
  fc.constantFrom(...Object.values(hostileTexts(450))).map((q) => `/api/search?limit=100&q=${encodeURIComponent(q)}`),
);

const jsonValue = fc.jsonValue({ maxDepth: 4 });
// The text shapes of issue 29 (quadratic Markdown clean-up, cubic heading pattern, whole-text
// snippets), at sizes that took the old code seconds: as item bodies, uploaded files, chat
// messages and history, and search queries.
const hostileBody = fc.constantFrom(...Object.values(hostileTexts(60_000)));
const hostileShort = fc.constantFrom(...Object.values(hostileTexts(3_900)));
const itemLike = fc.record(
  {
    id: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('__proto__'), fc.integer()),
    type: fc.oneof(fc.constantFrom('article', 'project', 'experience', 'ARTICLE', ''), jsonValue),
    title: fc.oneof(fc.string({ maxLength: 50 }), jsonValue),
    body: fc.oneof(fc.lorem({ maxCount: 30 }), jsonValue, hostileBody),
    tags: fc.oneof(fc.array(fc.string({ maxLength: 10 }), { maxLength: 5 }), jsonValue),
    date: fc.oneof(fc.constantFrom('2024-02-30', '2024-01-01', 'yesterday'), jsonValue),
    url: fc.oneof(fc.constantFrom('javascript:alert(1)', '/ok', 'https://example.org'), jsonValue),
  },
  { requiredKeys: [] },
);
const bodyArb = fc.oneof(
  fc.constant(undefined),
  jsonValue.map((v) => JSON.stringify(v)),
  itemLike.map((v) => JSON.stringify(v)),
  fc.array(itemLike, { maxLength: 5 }).map((items) => JSON.stringify({ items })),
  fc
    .record({ message: fc.oneof(fc.lorem({ maxCount: 20 }), jsonValue, hostileShort), stream: fc.boolean() })
    .map((v) => JSON.stringify(v)),
  fc
    .record({
      message: fc.lorem({ maxCount: 5 }),
      history: fc.array(fc.record({ role: fc.constantFrom('user', 'assistant'), content: hostileShort }), {
        maxLength: 20,
      }),
    })
    .map((v) => JSON.stringify(v)),
  hostileBody.map(
    (text) => `--b\r\nContent-Disposition: form-data; name="file"; filename="hostile.md"\r\n\r\n${text}\r\n--b--\r\n`,
  ),
  hostileBody.map(
    (text) => `--b\r\nContent-Disposition: form-data; name="file"; filename="hostile.md"\r\n\r\n#${text}\r\n--b--\r\n`,
  ),
  fc
    .record({
      k: jsonValue,
      queries: fc.array(fc.record({ query: fc.string(), relevant: jsonValue }), { maxLength: 5 }),
    })
    .map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    '{"a":',
    '{"__proto__":{"polluted":1}}',
    '['.repeat(5000),
    '{"constructor":{"prototype":{"x":1}}}',
    '\u0000\u0001',
    '--b\r\nContent-Disposition: form-data; name="file"; filename="a.md"\r\n\r\n# x',
  ),
);
const headersArb = fc.record(
  {
    'content-type': fc.constantFrom(
      'application/json',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'text/plain',
      'multipart/form-data; boundary=b',
      'multipart/form-data',
      'application/x-www-form-urlencoded',
      'application/vnd.api+json',
      '*/*',
      '',
    ),
    authorization: fc.constantFrom(`Bearer ${TOKEN}`, 'Bearer wrong', 'Basic abc', 'Bearer', `bearer ${TOKEN}`, ''),
    accept: fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html'),
    'content-encoding': fc.constantFrom('identity', 'gzip', 'deflate', 'br', 'bogus'),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', '1.2.3.4:80', 'garbage', '::1', '[::1]:80', 'a'.repeat(2000)),
  },
  { requiredKeys: [] },
);
const requestArb = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
  path: pathArb,
  headers: headersArb,
  body: bodyArb,
  gzip: fc.boolean(),
});

describe('fuzz: every route under random hostile requests', () => {
  let redis: RedisServer;
  let svc: ServiceProcess;
  let dataDir: string;

  beforeAll(async () => {
    redis = await RedisServer.start();
    dataDir = mkdtempSync(join(tmpdir(), 'svc-fuzz-'));
    svc = await ServiceProcess.start({
      env: hostileEnv(TOKEN, { ...WIDE_LIMITS, DATA_DIR: dataDir, RATELIMIT_STORAGE_URL: redis.url }),
    });
  }, 60000);

  afterAll(async () => {
    await svc?.stop();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test(
    `${RUNS} random requests: the process stays up, every answer is well-formed JSON, none is a 500`,
    async () => {
      const watch = await watchLiveness(svc.port);
      const bad: string[] = [];
      await fc.assert(
        fc.asyncProperty(requestArb, async (r) => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(r.headers)) if (v) headers[k] = v;
          let body: string | Buffer | undefined = r.body;
          if (body !== undefined && r.gzip && headers['content-encoding'] === 'gzip') body = gzipSync(body);
          if (body === undefined) delete headers['content-encoding'];
          // What a client library can put on the wire: spaces, controls and non-ASCII percent-encoded.
          const path = r.path.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
          const res = await svc.request(path, {
            method: r.method,
            headers,
            body: body === undefined || r.method === 'GET' || r.method === 'HEAD' ? undefined : body,
          });
          const why =
            malformedAnswer(res, r.method) ??
            (res.status >= 500 && res.status !== 503 ? `status ${res.status}: ${res.text.slice(0, 200)}` : undefined);
          if (why) bad.push(`${r.method} ${path} ${JSON.stringify(headers).slice(0, 200)} → ${why}`);
          return svc.running;
        }),
        { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 20261124), endOnFailure: true },
      );
      const report = await watch.stop();
      expect(bad.slice(0, 10)).toEqual([]);
      expect(svc.running).toBe(true);
      expect(report.missed).toEqual([]);
      expect(svc.process.logs()).not.toMatch(/uncaught|unhandled/i);
    },
    PROPERTY_HANG_GUARD_MS,
  );
});
