/**
 * `GET /api/search` through the whole service, this tree beside a baseline tree
 * (`BENCH_BASE=<dir>`): each runs bench/search/server-main.ts (createApp, demo content, file
 * store in a temp DATA_DIR, rate limiting on with limits out of reach) in its own process under
 * ts-node, pinned to CPU 1 (`taskset`) when available; autocannon on CPU 0 at 10 and 64
 * connections, interleaved rounds. Reports CPU µs per request (the judge on a shared machine)
 * and req/s, median over rounds, and this tree's ratio to the baseline.
 *
 *   BENCH_BASE=/tmp/base npx ts-node -T bench/contract/search-http.ts
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cpuMicros } from '../ratelimit/cpu-time';
import { load } from '../ratelimit/load';

const ROOT = resolve(__dirname, '..', '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '10,64').split(',').map(Number);
const PATH = '/api/search?q=rate%20limit&limit=10';
const pinned = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

async function start(root: string, dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const args = ['-r', 'ts-node/register/transpile-only', join(root, 'bench', 'search', 'server-main.ts')];
  const [cmd, argv] = pinned ? ['taskset', ['-c', '1', process.execPath, ...args]] : [process.execPath, args];
  const child = spawn(cmd, argv, {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      ENVIRONMENT: 'development',
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      DEMO_CONTENT: 'true',
      ...Object.fromEntries(
        ['GLOBAL', 'IP', 'SEARCH'].flatMap((t) => [
          [`RATE_LIMIT_${t}_REQUESTS`, '100000000'],
          [`RATE_LIMIT_${t}_BURST`, '100000000'],
        ]),
      ),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (b: Buffer) => (err += b.toString()));
  const port = await new Promise<number>((ok, fail) => {
    let out = '';
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m) ok(Number(m[1]));
    });
    child.once('exit', (code) => fail(new Error(`${root} exited with ${code}: ${err}`)));
  });
  return { child, url: `http://127.0.0.1:${port}${PATH}` };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  if (pinned) spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)]);
  const roots: Array<[string, string]> = [['this tree', ROOT]];
  if (process.env.BENCH_BASE) roots.push(['baseline', resolve(process.env.BENCH_BASE)]);
  const dirs = roots.map(() => mkdtempSync(join(tmpdir(), 'bench-contract-')));
  const servers = await Promise.all(roots.map(([, root], i) => start(root, dirs[i])));
  const cpu = new Map<string, number[]>();
  const rps = new Map<string, number[]>();
  try {
    for (const [i] of roots.entries()) await load(servers[i].url, { connections: 10, seconds: 1 }); // warm up
    for (const c of CONNECTIONS) {
      for (let r = 0; r < ROUNDS; r++) {
        const order = r % 2 ? [...roots.keys()].reverse() : [...roots.keys()];
        for (const i of order) {
          const key = `${roots[i][0]}@${c}`;
          const before = cpuMicros(servers[i].child.pid)!;
          const res = await load(servers[i].url, { connections: c, seconds: SECONDS });
          const used = cpuMicros(servers[i].child.pid)! - before;
          if (res.bad) throw new Error(`${key}: ${res.bad} answers were not 2xx`);
          (cpu.get(key) ?? cpu.set(key, []).get(key)!).push(used / res.total);
          (rps.get(key) ?? rps.set(key, []).get(key)!).push(res.rps);
        }
      }
    }
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
  for (const c of CONNECTIONS) {
    process.stdout.write(`\n${c} connections (${ROUNDS} rounds of ${SECONDS} s, GET ${PATH})\n`);
    for (const [name] of roots) {
      const key = `${name}@${c}`;
      process.stdout.write(
        `  ${name}: ${median(cpu.get(key)!).toFixed(0)} CPU µs / request, ${median(rps.get(key)!).toFixed(0)} req/s\n`,
      );
    }
    if (roots.length === 2) {
      const [a, b] = roots.map(([n]) => `${n}@${c}`);
      process.stdout.write(
        `  ratio this / baseline: CPU ${(median(cpu.get(a)!) / median(cpu.get(b)!)).toFixed(3)}, req/s ${(median(rps.get(a)!) / median(rps.get(b)!)).toFixed(3)}\n`,
      );
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
