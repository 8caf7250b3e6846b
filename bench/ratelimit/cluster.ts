/**
 * Rate limiting on a three-master Redis Cluster against one standalone Redis, side by side in one
 * run: this service's full stack in two processes, one per store, at 10 and at 64 connections,
 * interleaved rounds (order rotated), req/s and CPU µs per request (the service process plus every
 * redis-server it uses). `run()` returns the markdown and writes bench/results/ratelimit-cluster.md;
 * `npx ts-node -T bench/ratelimit/cluster.ts` runs it alone.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { RedisCluster } from '../../tools/harness/redis-cluster';
import { RedisServer } from '../../tools/harness/redis';
import { cpuMicros } from './cpu-time';
import { load } from './load';
import { BENCH_PATH } from './servers';
import { benchScript, spawnListening } from './spawn-server';

const ROOT = join(__dirname, '..', '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2.5);
const CONNECTION_LEVELS = [10, 64] as const;
type Mode = 'standalone' | 'cluster';

interface Contestant {
  readonly mode: Mode;
  readonly url: string;
  readonly child: ChildProcess;
  /** Pids of the redis-servers this contestant uses (their CPU counts too). */
  readonly redisPids: readonly (number | undefined)[];
}

interface Run {
  readonly rps: number;
  readonly cpuUs: number | undefined;
}

function log(msg: string): void {
  process.stderr.write(`[bench:ratelimit-cluster] ${msg}\n`);
}

async function start(mode: Mode, args: string[], redisPids: readonly (number | undefined)[]): Promise<Contestant> {
  const { child, port } = await spawnListening(
    process.execPath,
    [...benchScript(ROOT, 'cluster-server-main.ts'), mode, ...args],
    ROOT,
    mode,
  );
  return { mode, url: `http://127.0.0.1:${port}${BENCH_PATH}?q=bench`, child, redisPids };
}

async function stop(c: Contestant): Promise<void> {
  if (c.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => c.child.once('exit', () => resolve()));
  c.child.kill('SIGTERM');
  await exited;
}

function cpuOf(c: Contestant): number | undefined {
  const all = [cpuMicros(c.child.pid), ...c.redisPids.map((p) => cpuMicros(p))];
  return all.some((x) => x === undefined) ? undefined : (all as number[]).reduce((a, b) => a + b, 0);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** Runs the comparison; returns (and writes) the markdown. */
export async function run(): Promise<string> {
  const started = Date.now();
  const redis = await RedisServer.start();
  const cluster = await RedisCluster.start();
  const contestants: Contestant[] = [];
  try {
    contestants.push(await start('standalone', [redis.url], [redis.process.pid]));
    contestants.push(
      await start(
        'cluster',
        [cluster.url(0), cluster.seeds.slice(1).join(',')],
        cluster.nodes.map((n) => n.process.pid),
      ),
    );
    for (const c of contestants) await load(c.url, { connections: 64, seconds: 1.5 });
    const rows: string[] = [];
    for (const connections of CONNECTION_LEVELS) {
      const runs = new Map<Mode, Run[]>(contestants.map((c) => [c.mode, []]));
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 ? [...contestants].reverse() : contestants;
        for (const c of order) {
          const before = cpuOf(c);
          const r = await load(c.url, { connections, seconds: SECONDS });
          const after = cpuOf(c);
          if (r.bad) throw new Error(`${c.mode}: ${r.bad} non-2xx/errors/timeouts`);
          const cpuUs = before === undefined || after === undefined ? undefined : (after - before) / r.total;
          runs.get(c.mode)!.push({ rps: r.rps, cpuUs });
          log(
            `${connections} conn, round ${round + 1}/${ROUNDS} ${c.mode}: ${fmt(r.rps)} req/s, ${cpuUs?.toFixed(0) ?? '?'} µs CPU/request`,
          );
        }
      }
      const s = runs.get('standalone')!;
      const k = runs.get('cluster')!;
      const cpu = (xs: Run[]) =>
        xs.every((x) => x.cpuUs !== undefined) ? median(xs.map((x) => x.cpuUs as number)) : undefined;
      const ratio = median(k.map((r, i) => r.rps / s[i].rps));
      const cs = cpu(s);
      const ck = cpu(k);
      rows.push(
        `| ${connections} | ${fmt(median(s.map((r) => r.rps)))} | ${fmt(median(k.map((r) => r.rps)))} | ${ratio.toFixed(2)} × | ` +
          `${cs === undefined ? 'n/a' : Math.round(cs)} | ${ck === undefined ? 'n/a' : Math.round(ck)} | ${cs && ck ? (ck / cs).toFixed(2) : 'n/a'} × |`,
      );
    }
    const md = [
      `Run ${new Date(started).toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'CPU'}, Node ${process.version}; ` +
        `this service (full stack, limits out of reach, every answer a 200) on one standalone redis-server and on a three-master ` +
        `Redis Cluster (all on loopback, the same machine), ${ROUNDS} interleaved rounds of ${SECONDS} s per store and connection count, ` +
        `medians shown; the ratio is the median of cluster ÷ standalone req/s within a round. The machine is shared and noisy ` +
        `(two cores, other work running): absolute req/s move by ±20 % between runs, ratios and CPU per request much less. ` +
        `CPU µs / request: the service process plus every redis-server it uses (one, or three).`,
      '',
      '| connections | standalone req/s | cluster req/s | cluster ÷ standalone | standalone CPU µs / req | cluster CPU µs / req | cluster ÷ standalone CPU |',
      '|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      'On the cluster an admitted request takes two script calls (its client slot, then the global slot): see docs/rate-limiting.md.',
      '',
    ].join('\n');
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(
      join(ROOT, 'bench', 'results', 'ratelimit-cluster.md'),
      `## Rate limiting: Redis Cluster vs standalone\n\n${md}`,
    );
    return md;
  } finally {
    await Promise.all(contestants.map(stop));
    await cluster.stop();
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
