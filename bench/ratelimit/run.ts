/**
 * Rate-limiting benchmark: this service's full middleware stack against express-rate-limit +
 * rate-limit-redis, rate-limiter-flexible and bare Express, side by side in one run on one Redis,
 * with the same three limits (global, per IP, search) set so high that nothing is refused.
 *
 * Reports req/s, p99 and CPU µs per request (contestant + redis-server; medians of interleaved
 * rounds, at 100 and at 32 connections), Redis round trips per request one at a time and 100 at a
 * time (round-trips.ts), and the memory store's heap after 1,000,000 distinct clients. `run()` returns the markdown and writes bench/results/ratelimit.md;
 * `npx ts-node -T bench/ratelimit/run.ts` runs it standalone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { RedisServer } from '../../test/harness/redis';
import { cpuMicros } from './cpu-time';
import { load, type LoadResult } from './load';
import type { MemoryResult } from './memory';
import { countCommands, type CommandCount } from './round-trips';
import { BENCH_PATH, HIGH, SERVER_KINDS, type ServerKind } from './servers';

const ROOT = join(__dirname, '..', '..');
/**
 * Timed rounds per contestant, interleaved (order rotated each round), and seconds per timed run.
 * Many short rounds rather than a few long ones: a ratio is taken within a round, so the less time
 * between the contestants of a round, the less the shared machine's speed drifts between them, and
 * the more rounds, the steadier their median (with 4 rounds of 4 s, two runs of the same code put
 * this service at 1.29 and 1.41 × express-rate-limit).
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2.5);
/**
 * Concurrent keep-alive connections: enough that every contestant saturates its server's CPU.
 * With fewer, the Redis-backed ones leave their server idle while Redis waits for a CPU on the two
 * shared cores, and the run measures scheduling latency as much as cost; a second pass at
 * `LOW_CONNECTIONS`, as many rounds, shows that case, floors checked there too.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const LOW_CONNECTIONS = 32;
/** The contestants of the floors (the low-concurrency pass runs only these). */
const FLOOR_KINDS: readonly ServerKind[] = ['service', 'express-rate-limit', 'rate-limiter-flexible', 'bare'];
/** Requests counted under MONITOR per contestant, one after another. */
const COUNTED = 500;
/** And at the same time: this many clients, each sending `CONCURRENT_EACH` one after another. */
const CONCURRENT_LOOPS = 100;
const CONCURRENT_EACH = 20;

const LABELS: Record<ServerKind, string> = {
  service: '**this service** (full middleware stack)',
  'express-rate-limit': 'express-rate-limit 8 + rate-limit-redis 6',
  'rate-limiter-flexible': 'rate-limiter-flexible 11 (RateLimiterRedis ×3)',
  bare: 'bare Express 5 (no limiter)',
  'service-unlimited': '_context:_ this service, RATELIMIT_ENABLED=false',
  'limiter-only': '_context:_ this service\'s limiter alone on bare Express',
};

/** A contestant running in its own process. */
interface Contestant {
  readonly kind: ServerKind;
  readonly url: string;
  readonly child: ChildProcess;
}

function tsNodeArgs(file: string, extra: string[] = []): string[] {
  return [...extra, '-r', 'ts-node/register/transpile-only', join(__dirname, file)];
}

async function startContestant(kind: ServerKind, redisUrl: string): Promise<Contestant> {
  const child = spawn(process.execPath, [...tsNodeArgs('server-main.ts'), kind, redisUrl], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (b: Buffer) => (err += b.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}: ${err}`)));
  });
  return { kind, url: `http://127.0.0.1:${port}${BENCH_PATH}?q=bench`, child };
}

async function stopContestant(c: Contestant): Promise<void> {
  if (c.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => c.child.once('exit', () => resolve()));
  c.child.kill('SIGTERM');
  const timer = setTimeout(() => c.child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

function memoryProbe(): Promise<MemoryResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, tsNodeArgs('memory.ts', ['--expose-gc']), { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as MemoryResult) : reject(new Error(`memory probe exited with ${code}`))));
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function log(msg: string): void {
  process.stderr.write(`[bench:ratelimit] ${msg}\n`);
}

/** One timed run: the load's figures and the CPU time per request of the contestant plus redis-server, µs. */
type Run = LoadResult & { readonly cpuUs: number | undefined };
/** Per-round results of each contestant. */
type Rounds = Map<ServerKind, Run[]>;

/** `rounds` interleaved rounds over `contestants`, the order rotated each round. */
async function measure(
  contestants: readonly Contestant[],
  redisPid: number | undefined,
  connections: number,
  rounds: number,
  seconds: number,
): Promise<Rounds> {
  const runs: Rounds = new Map(contestants.map((c) => [c.kind, []]));
  const cpu = (c: Contestant) => {
    const a = cpuMicros(c.child.pid);
    const b = cpuMicros(redisPid);
    return a === undefined || b === undefined ? undefined : a + b;
  };
  for (let round = 0; round < rounds; round++) {
    const order = contestants.map((_, i) => contestants[(i + round) % contestants.length]);
    for (const c of order) {
      const before = cpu(c);
      const r = await load(c.url, { connections, seconds });
      const after = cpu(c);
      if (r.bad) throw new Error(`${c.kind}: ${r.bad} non-2xx/errors/timeouts: a limit was reached or a server failed`);
      const cpuUs = before === undefined || after === undefined ? undefined : (after - before) / r.total;
      runs.get(c.kind)!.push({ ...r, cpuUs });
      log(`${connections} conn, round ${round + 1}/${rounds} ${c.kind}: ${fmt(r.rps)} req/s, p99 ${r.p99} ms, ${cpuUs?.toFixed(0) ?? '?'} µs CPU/request`);
    }
  }
  return runs;
}

/** Median over rounds of a's req/s divided by b's in the same round (noise of a shared machine cancels). */
function ratioOf(runs: Rounds, a: ServerKind, b: ServerKind): number {
  const ra = runs.get(a)!;
  const rb = runs.get(b)!;
  return median(ra.map((r, i) => r.rps / rb[i].rps));
}

/** Runs the whole benchmark; returns (and writes) the markdown. */
export async function run(): Promise<string> {
  const started = Date.now();
  const redis = await RedisServer.start();
  const admin = new Redis(redis.url);
  const contestants: Contestant[] = [];
  try {
    log(`redis-server on ${redis.port}; starting ${SERVER_KINDS.length} contestants`);
    contestants.push(...(await Promise.all(SERVER_KINDS.map((k) => startContestant(k, redis.url)))));
    for (const c of contestants) await load(c.url, { connections: CONNECTIONS, seconds: 1.5 });
    const trips = new Map<ServerKind, CommandCount>();
    const tripsAtOnce = new Map<ServerKind, CommandCount>();
    for (const c of contestants) {
      trips.set(c.kind, await countCommands(redis.url, c.url, 1, COUNTED));
      tripsAtOnce.set(c.kind, await countCommands(redis.url, c.url, CONCURRENT_LOOPS, CONCURRENT_EACH));
    }
    const runs = await measure(contestants, redis.process.pid, CONNECTIONS, ROUNDS, SECONDS);
    const low = await measure(
      contestants.filter((c) => FLOOR_KINDS.includes(c.kind)),
      redis.process.pid,
      LOW_CONNECTIONS,
      ROUNDS,
      SECONDS,
    );
    log('memory store: 1,000,000 distinct clients');
    const mem = await memoryProbe();
    const redisVersion = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? '?';

    const rps = (k: ServerKind) => median(runs.get(k)!.map((r) => r.rps));
    const p99 = (k: ServerKind) => median(runs.get(k)!.map((r) => r.p99));
    const cpuOf = (k: ServerKind) => {
      const xs = runs.get(k)!.map((r) => r.cpuUs);
      return xs.every((x) => x !== undefined) ? `${Math.round(median(xs as number[]))}` : 'n/a';
    };
    const spread = (k: ServerKind) => {
      const xs = runs.get(k)!.map((r) => r.rps);
      return `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;
    };
    const rows = SERVER_KINDS.map(
      (k) =>
        `| ${LABELS[k]} | ${fmt(rps(k))} | ${spread(k)} | ${p99(k)} | ${cpuOf(k)} | ${trips.get(k)!.perRequest.toFixed(2)} | ${tripsAtOnce.get(k)!.perRequest.toFixed(3)} | ${trips.get(k)!.commands} |`,
    );
    const floor = (ok: boolean) => (ok ? 'met' : '**not met**');
    const oursTrips = trips.get('service')!.perRequest;
    const oursAtOnce = tripsAtOnce.get('service')!.perRequest;
    const x = (r: Rounds, a: ServerKind, b: ServerKind) => `${ratioOf(r, a, b).toFixed(2)} ×`;
    const floorRow = (label: string, b: ServerKind, min: number) =>
      `| ${label} | ${x(runs, 'service', b)} | ${floor(ratioOf(runs, 'service', b) >= min)} | ${x(low, 'service', b)} | ${floor(ratioOf(low, 'service', b) >= min)} |`;
    const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
    const md = [
      `Run ${new Date(started).toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'CPU'}, Node ${process.version}, ` +
        `redis-server ${redisVersion} (one instance for all), autocannon with ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ` +
        `${SECONDS} s per contestant (median and min–max shown). The machine is shared with other work, so absolute figures move ` +
        `by ±20 % between runs; ratios are the median over rounds of the two contestants' req/s in the same round. ` +
        `Every contestant runs in its own process, serves \`GET ${BENCH_PATH}?q=bench\` with \`{"ok":true}\` (x-powered-by and ETag off) ` +
        `and applies a global, a per-IP and a search limit of ${HIGH.requests.toLocaleString('en-US')} per ${HIGH.windowSeconds} s, so ` +
        `nothing is refused (every answer was a 200). "this service" is \`createApp\` as deployed: request metrics, operational ` +
        `endpoints, the limiter on the kvstore, JSON body parser, features router, 404 and error handlers; the two libraries run on ` +
        `bare Express. Round trips: commands MONITOR saw from clients (those run inside Lua scripts excluded) per request, for ` +
        `${COUNTED} requests sent one after another (what one request costs) and for ${CONCURRENT_LOOPS} clients sending ` +
        `${CONCURRENT_EACH} each at the same time (${(CONCURRENT_LOOPS * CONCURRENT_EACH).toLocaleString('en-US')} requests; this ` +
        `service batches the decisions of one event-loop turn into one EVALSHA, so under concurrency requests share round trips). ` +
        `CPU µs / request: user + system time of the contestant's process and of redis-server over a timed run (from /proc), ` +
        `divided by its requests, median over rounds; unlike req/s it barely moves with the machine's other load.`,
      '',
      `| Contestant | req/s | range | p99 ms | CPU µs / request | Redis round trips / request, one at a time | … ${CONCURRENT_LOOPS} at a time | commands / request (one at a time) |`,
      '|---|---:|---:|---:|---:|---:|---:|---|',
      ...rows,
      '',
      `| Floor (this service, full stack) | ${CONNECTIONS} connections | | ${LOW_CONNECTIONS} connections | |`,
      '|---|---:|---|---:|---|',
      `| 1 Redis round trip per request (one at a time; ${CONCURRENT_LOOPS} at a time) | ${oursTrips.toFixed(2)}; ${oursAtOnce.toFixed(3)} | ${floor(oursTrips === 1 && oursAtOnce <= 1)} | | |`,
      floorRow('≥ 1.3 × express-rate-limit req/s', 'express-rate-limit', 1.3),
      floorRow('≥ 1 × rate-limiter-flexible req/s', 'rate-limiter-flexible', 1),
      floorRow('≥ 0.75 × bare Express req/s', 'bare', 0.75),
      '',
      `Context: without rate limiting the service runs at ${x(runs, 'service-unlimited', 'bare')} bare Express (the stack around ` +
        `the limiter); with it, at ${x(runs, 'service', 'service-unlimited')} its unlimited self. Like for like on bare Express, the ` +
        `limiter alone runs at ${x(runs, 'limiter-only', 'express-rate-limit')} express-rate-limit, ` +
        `${x(runs, 'limiter-only', 'rate-limiter-flexible')} rate-limiter-flexible and ${x(runs, 'limiter-only', 'bare')} bare Express.`,
      '',
      `Memory store after ${mem.clients.toLocaleString('en-US')} distinct clients (IP + Global, one request each, default ` +
        `\`RATE_LIMIT_MEMORY_MAX_KEYS\`=${mem.maxKeys.toLocaleString('en-US')}): ${mem.keysHeld.toLocaleString('en-US')} keys held, ` +
        `${mb(mem.heapBytes)} MiB of heap (${mem.bytesPerKey} B per key), ${fmt(mem.decisionsPerSecond)} decisions/s. ` +
        `Documented cap: 320 B × RATE_LIMIT_MEMORY_MAX_KEYS (32 MB at the default): ${floor(mem.heapBytes <= 320 * mem.maxKeys)}.`,
      '',
      `Whole run: ${Math.round((Date.now() - started) / 1000)} s.`,
      '',
    ].join('\n');
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'results', 'ratelimit.md'), `## Rate limiting\n\n${md}`);
    return md;
  } finally {
    await Promise.all(contestants.map(stopContestant));
    admin.disconnect();
    await redis.stop();
  }
}

if (require.main === module) {
  run().then(
    (md) => process.stdout.write(`${md}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
