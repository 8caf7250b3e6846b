/**
 * Search over HTTP at a grown corpus size: the real service in a child process (file store,
 * result cache of one entry, so every request is scored), the grown Vaswani corpus ingested
 * through `POST /api/ingest-batch`, the service restarted on it, then autocannon: the full
 * queries at one connection (one at a time) and at 8, then their 2-word forms at 1 and at 8.
 *
 * Each checkout is measured twice per round: loaded **right after ready** (what the first
 * minutes of a restarted replica meet: the id map, metadata and vocabulary are still being
 * filled in the background, lazy items not parsed yet) and, from another fresh start, once the
 * process is **settled** (its CPU idle for 2 s after ready). With `--base <root>` (another
 * checkout, e.g. main in a git worktree) its service is started on the same DATA_DIR with its
 * segment in a folder of its own (`INDEX_DIR=<DATA_DIR>/search-index-base`), alternating which
 * goes first. `--data <dir>` keeps the filled DATA_DIR there and reuses it when it already holds
 * content (no ingest: a 1M ingest takes ~6 minutes). `--node-args "<args>"` are passed to the
 * service's node (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`). Every load reports the 1-minute
 * load average at its start.
 *
 * `npx ts-node -T bench/search/http-grown.ts [size] [--rounds n] [--seconds s] [--base <root>] [--data <dir>] [--node-args "<args>"] [--only ready|settled]`
 * (default 200,000, one round, 10 s per load).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { twoWordQueries } from '../../tools/corpus/grow-corpus';
import { load, type Speed } from './run';
import { ingestGrown, settledFile, startAt } from './restart';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';

/** The loads of one start, each with the 1-minute load average at its start. */
export interface HttpLoads {
  readonly checkout: 'this' | 'base';
  readonly phase: 'ready' | 'settled';
  /** Process start to ready, ms. */
  readonly readyMs: number;
  /** Ready to settled (CPU idle), ms; 0 for `ready`. */
  readonly settleMs: number;
  readonly full1: Speed & { load: number };
  readonly full8: Speed & { load: number };
  readonly short1: Speed & { load: number };
  readonly short8: Speed & { load: number };
}

/** One HTTP run at one size. */
export interface HttpGrown {
  readonly docs: number;
  /** 0 when a kept DATA_DIR was reused. */
  readonly ingestSeconds: number;
  readonly runs: HttpLoads[];
}

export interface HttpGrownOptions {
  readonly seconds?: number;
  readonly rounds?: number;
  readonly base?: string;
  readonly keep?: string;
  readonly nodeArgs?: readonly string[];
  readonly phases?: ReadonlyArray<'ready' | 'settled'>;
}

/** Process CPU time (user + system) of `pid` in ms, from /proc. */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Waits until the process has used < 5% of a core for 2 s in a row (its background fills done). */
async function idle(pid: number, maxMs = 300_000): Promise<void> {
  const t0 = Date.now();
  let last = cpuMsOf(pid);
  let quiet = 0;
  while (Date.now() - t0 < maxMs && quiet < 4) {
    await new Promise((r) => setTimeout(r, 500));
    const now = cpuMsOf(pid);
    quiet = now - last < 25 ? quiet + 1 : 0;
    last = now;
  }
}

/** Ingests Vaswani grown to `size` (unless `keep` holds it already), then loads restarted services with full and 2-word queries. */
export async function httpGrown(v: Vaswani, size: number, opts: HttpGrownOptions = {}): Promise<HttpGrown> {
  const root = join(__dirname, '..', '..');
  const seconds = opts.seconds ?? 10;
  const reuse = opts.keep !== undefined && existsSync(join(opts.keep, 'search-index', 'search-segment.bin'));
  const dataDir = opts.keep ?? mkdtempSync(join(tmpdir(), 'search-http-grown-'));
  const env = {
    DATA_DIR: dataDir,
    ENVIRONMENT: 'testing',
    RATELIMIT_ENABLED: 'false',
    LOG_LEVEL: 'silent',
    SEARCH_CACHE_SIZE: '1',
  };
  const baseEnv = { ...env, INDEX_DIR: join(dataDir, 'search-index-base') };
  let ingestSeconds = 0;
  const runs: HttpLoads[] = [];
  try {
    if (!reuse) {
      ingestSeconds = await ingestGrown(root, env, v, size);
      // The first start re-indexes what the last merge had not covered and persists a segment
      // and the content catalogue in the background: let it, so every measured start is a restart.
      const since = Date.now();
      const first = await startAt(root, env);
      await settledFile(join(dataDir, 'search-index', 'search-segment.bin'), since);
      await idle(first.pid);
      await first.stop();
    }
    if (opts.base && !existsSync(join(baseEnv.INDEX_DIR, 'search-segment.bin'))) {
      const since = Date.now();
      const b = await startAt(opts.base, baseEnv);
      await settledFile(join(baseEnv.INDEX_DIR, 'search-segment.bin'), since);
      await idle(b.pid);
      await b.stop();
    }
    const texts = v.queries.map((q) => q.text);
    const path = (q: string) => `/api/search?q=${encodeURIComponent(q)}&limit=10`;
    const fullPaths = texts.map(path);
    const shortPaths = twoWordQueries(texts).map(path);
    const timed = async (port: number, paths: readonly string[], connections: number) => {
      const at = Math.round(loadavg()[0] * 10) / 10;
      return { ...(await load(port, paths, seconds, connections)), load: at };
    };
    const one = async (checkout: 'this' | 'base', phase: 'ready' | 'settled') => {
      const s =
        checkout === 'this'
          ? await startAt(root, env, opts.nodeArgs)
          : await startAt(opts.base!, baseEnv, opts.nodeArgs);
      const t0 = performance.now();
      if (phase === 'settled') await idle(s.pid);
      const settleMs = phase === 'settled' ? Math.round(performance.now() - t0) : 0;
      const full1 = await timed(s.port, fullPaths, 1);
      const full8 = await timed(s.port, fullPaths, 8);
      const short1 = await timed(s.port, shortPaths, 1);
      const short8 = await timed(s.port, shortPaths, 8);
      await s.stop();
      const r: HttpLoads = { checkout, phase, readyMs: s.readyMs, settleMs, full1, full8, short1, short8 };
      process.stderr.write(`${JSON.stringify(r)}\n`);
      runs.push(r);
    };
    const phases = opts.phases ?? ['ready', 'settled'];
    for (let round = 0; round < (opts.rounds ?? 1); round++) {
      // Alternating which checkout goes first.
      const order: Array<'this' | 'base'> = !opts.base
        ? ['this']
        : round % 2 === 0
          ? ['base', 'this']
          : ['this', 'base'];
      for (const phase of phases) for (const c of order) await one(c, phase);
    }
    return { docs: size, ingestSeconds, runs };
  } finally {
    if (opts.keep === undefined) rmSync(dataDir, { recursive: true, force: true });
  }
}

const ms = (x: number) => `${Math.round(x)} ms`;

/** Markdown rows of `r`: one per start, p50 / p99 and req/s of each load. */
export function httpGrownTable(r: HttpGrown): string[] {
  const cell = (s: Speed & { load: number }) =>
    `${ms(s.p50)} / ${ms(s.p99)}, ${s.rps.toFixed(1)}/s${s.errors ? `, ${s.errors} errors` : ''}`;
  return [
    '| checkout | phase | ready | full, 1 conn p50 / p99, req/s | full, 8 conn | 2-word, 1 conn | 2-word, 8 conn | load avg |',
    '|---|---|---|---|---|---|---|---|',
    ...r.runs.map(
      (x) =>
        `| ${x.checkout} | ${x.phase}${x.phase === 'settled' ? ` (+${(x.settleMs / 1000).toFixed(1)} s)` : ''} | ${(x.readyMs / 1000).toFixed(2)} s | ${cell(x.full1)} | ${cell(x.full8)} | ${cell(x.short1)} | ${cell(x.short8)} | ${[x.full1, x.full8, x.short1, x.short8].map((s) => s.load).join(', ')} |`,
    ),
  ];
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const only = flag('--only') as 'ready' | 'settled' | undefined;
  httpGrown(loadVaswani(), Number(args.find((a) => /^\d+$/.test(a)) ?? 200_000), {
    seconds: Number(flag('--seconds') ?? 10),
    rounds: Number(flag('--rounds') ?? 1),
    base: flag('--base'),
    keep: flag('--data'),
    nodeArgs: flag('--node-args')?.split(' ').filter(Boolean),
    phases: only ? [only] : undefined,
  }).then(
    (r) => process.stdout.write(`${JSON.stringify(r)}\n\n${httpGrownTable(r).join('\n')}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
