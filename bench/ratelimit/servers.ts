import express, { type Express, type RequestHandler } from 'express';
import { rateLimit, ipKeyGenerator } from 'express-rate-limit';
import Redis from 'ioredis';
import { RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { RedisStore as ErlRedisStore, type RedisReply } from 'rate-limit-redis';
import { parseSettings } from '../../configs';
import { createApp } from '../../service/app';
import { createDeps, startDeps, closeDeps } from '../../service/deps';
import { silentLogger } from '../../service/lib/logger';

/** The contestants of the floors (this service on both stores, the libraries, the floor, bare Express), then two for context. */
export type ServerKind =
  | 'service'
  | 'service-memory'
  | 'express-rate-limit'
  | 'rate-limiter-flexible'
  | 'floor'
  | 'bare'
  | 'service-unlimited'
  | 'limiter-only'
  | 'floor-batched';
export const SERVER_KINDS: readonly ServerKind[] = [
  'service',
  'service-memory',
  'express-rate-limit',
  'rate-limiter-flexible',
  'floor',
  'bare',
  'service-unlimited',
  'limiter-only',
  'floor-batched',
];

/** The benchmarked route and its answer, identical everywhere. */
export const BENCH_PATH = '/api/search';
const handler: RequestHandler = (_req, res) => {
  res.json({ ok: true });
};

/** The same three limits everywhere (global, per IP, search tier), far above what a run can reach. */
export const HIGH = { requests: 100_000_000, windowSeconds: 60 };

/** What every contestant shares: Express with x-powered-by and ETags off, as the service sets them. */
function baseApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  return app;
}

/** A running contestant. */
export interface BenchServer {
  readonly app: Express;
  close(): Promise<void>;
}

/**
 * This service's deps with the three limits far out of reach (`enabled` false: no limiting at
 * all); `redisUrl` undefined: no kvstore, so the limiter runs on its memory store.
 */
async function serviceDeps(redisUrl: string | undefined, enabled: boolean) {
  const tier = { limit: HIGH.requests, windowSeconds: HIGH.windowSeconds, burst: HIGH.requests };
  const settings = parseSettings({
    service: { environment: 'production', logLevel: 'silent' },
    kvstore: redisUrl === undefined ? {} : { url: redisUrl },
    rateLimit: { enabled, tiers: { global: tier, ip: tier, search: tier } },
  });
  const router = express.Router();
  router.get(BENCH_PATH, handler);
  const deps = createDeps(settings, {
    logger: silentLogger(),
    features: {
      router,
      cache: { size: () => 0, maxSize: () => 0 },
      start: async () => undefined,
      close: async () => undefined,
    },
  });
  await startDeps(deps);
  const expected = redisUrl === undefined ? 'memory' : 'kvstore';
  if (deps.rateLimiter.backend() !== expected) throw new Error(`service: the limiter is not on the ${expected} store`);
  return deps;
}

/** This service: createApp with its whole middleware stack (metrics, ops, limiter, JSON body, 404, errors). */
async function service(redisUrl: string | undefined, enabled = true): Promise<BenchServer> {
  const deps = await serviceDeps(redisUrl, enabled);
  return { app: createApp(deps), close: () => closeDeps(deps) };
}

/** This service's limiter alone on bare Express: like for like with the two libraries. */
async function limiterOnly(redisUrl: string): Promise<BenchServer> {
  const deps = await serviceDeps(redisUrl, true);
  const app = baseApp();
  app.use(deps.rateLimiter.middleware);
  app.get(BENCH_PATH, handler);
  return { app, close: () => closeDeps(deps) };
}

/** express-rate-limit 8 + rate-limit-redis 6: one limiter (one EVALSHA) per level, as documented. */
async function expressRateLimit(redisUrl: string): Promise<BenchServer> {
  const client = new Redis(redisUrl);
  const store = (prefix: string) =>
    new ErlRedisStore({
      prefix,
      sendCommand: (command: string, ...args: string[]) => client.call(command, ...args) as Promise<RedisReply>,
    });
  const windowMs = HIGH.windowSeconds * 1000;
  const app = baseApp();
  app.use(rateLimit({ windowMs, limit: HIGH.requests, store: store('erl:global:'), keyGenerator: () => 'global' }));
  app.use(rateLimit({ windowMs, limit: HIGH.requests, store: store('erl:ip:') }));
  app.use(
    BENCH_PATH,
    rateLimit({
      windowMs,
      limit: HIGH.requests,
      store: store('erl:search:'),
      keyGenerator: (req) => ipKeyGenerator(req.ip ?? ''),
    }),
  );
  app.get(BENCH_PATH, handler);
  return { app, close: async () => void (await client.quit()) };
}

/** rate-limiter-flexible 11: one RateLimiterRedis per level, consumed in parallel (RateLimiterUnion's way). */
async function rateLimiterFlexible(redisUrl: string): Promise<BenchServer> {
  const client = new Redis(redisUrl);
  const limiter = (keyPrefix: string) =>
    new RateLimiterRedis({ storeClient: client, keyPrefix, points: HIGH.requests, duration: HIGH.windowSeconds });
  const global = limiter('rlf:global');
  const ip = limiter('rlf:ip');
  const search = limiter('rlf:search');
  const app = baseApp();
  app.use(BENCH_PATH, (req, res, next) => {
    const key = req.ip ?? '';
    Promise.all([global.consume('global'), ip.consume(key), search.consume(key)]).then(
      (results: RateLimiterRes[]) => {
        // The headers its README suggests, from the most constrained result.
        const tight = results.reduce((a, b) => (b.remainingPoints < a.remainingPoints ? b : a));
        res.setHeader('X-RateLimit-Limit', String(HIGH.requests));
        res.setHeader('X-RateLimit-Remaining', String(tight.remainingPoints));
        res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + tight.msBeforeNext) / 1000)));
        next();
      },
      () => res.status(429).json({ error: 'rate_limit_exceeded' }),
    );
  });
  app.get(BENCH_PATH, handler);
  return { app, close: async () => void (await client.quit()) };
}

/**
 * The floor: bare Express and one `EVALSHA` per request through ioredis, nothing around it. The
 * script is rate-limit-redis's fixed window on the client's key (INCR, PEXPIRE on a new key):
 * the least a Redis-backed limiter can do per request, so what a request costs beyond it is the
 * price of the stack and of exactness.
 */
async function floor(redisUrl: string): Promise<BenchServer> {
  const client = new Redis(redisUrl);
  const windowMs = String(HIGH.windowSeconds * 1000);
  const sha = (await client.script('LOAD', FLOOR_SCRIPT)) as string;
  const app = baseApp();
  app.use(BENCH_PATH, (req, res, next) => {
    client.evalsha(sha, 1, `floor:${req.ip ?? ''}`, windowMs).then(
      (hits) => {
        if (Number(hits) > HIGH.requests) res.status(429).json({ error: 'rate_limit_exceeded' });
        else next();
      },
      () => next(),
    );
  });
  app.get(BENCH_PATH, handler);
  return { app, close: async () => void (await client.quit()) };
}

/**
 * The floor with this service's batching: bare Express and one `EVALSHA` per event-loop turn
 * (every request of the turn in it, `setImmediate` as in service/ratelimit/redis-decision-store.ts), the
 * script INCRs each request's key. What one round trip shared by a turn costs with nothing else
 * around it: the least any batched limiter can cost, the 10- and 64-connection yardstick.
 */
async function floorBatched(redisUrl: string): Promise<BenchServer> {
  const client = new Redis(redisUrl);
  const sha = (await client.script('LOAD', BATCHED_FLOOR_SCRIPT)) as string;
  let waiting: (() => void)[] = [];
  let keys: string[] = [];
  const flush = () => {
    const turn = waiting;
    const args = keys;
    waiting = [];
    keys = [];
    const go = () => {
      for (const next of turn) next();
    };
    client.evalsha(sha, args.length, ...args).then(go, go);
  };
  const app = baseApp();
  app.use(BENCH_PATH, (req, _res, next) => {
    if (waiting.push(next) === 1) setImmediate(flush);
    keys.push(`floor:${req.ip ?? ''}`);
  });
  app.get(BENCH_PATH, handler);
  return { app, close: async () => void (await client.quit()) };
}

const BATCHED_FLOOR_SCRIPT = "for i = 1, #KEYS do redis.call('INCR', KEYS[i]) end return #KEYS";

/** rate-limit-redis 6's script, minus its reply's second field. */
const FLOOR_SCRIPT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return hits
`.trim();

/** Express and the route, nothing else. */
async function bare(): Promise<BenchServer> {
  const app = baseApp();
  app.get(BENCH_PATH, handler);
  return { app, close: async () => undefined };
}

/** Builds a contestant against the Redis at `redisUrl`. */
export function buildServer(kind: ServerKind, redisUrl: string): Promise<BenchServer> {
  switch (kind) {
    case 'service':
      return service(redisUrl);
    case 'express-rate-limit':
      return expressRateLimit(redisUrl);
    case 'rate-limiter-flexible':
      return rateLimiterFlexible(redisUrl);
    case 'service-memory':
      return service(undefined);
    case 'floor':
      return floor(redisUrl);
    case 'bare':
      return bare();
    case 'service-unlimited':
      return service(redisUrl, false);
    case 'limiter-only':
      return limiterOnly(redisUrl);
    case 'floor-batched':
      return floorBatched(redisUrl);
  }
}
