/**
 * The first listing after a restart, tag filters, and a replica's memory, A/B against another
 * checkout: Vaswani grown to `size` (default 200,000) ingested through `POST /api/ingest-batch`
 * into one DATA_DIR (half articles, a quarter each projects and experiences; every item tagged
 * `Topic-<n mod 50>`, one in a hundred also `Rare`), then per checkout a copy of that folder
 * (hard links; each checkout writes its own content catalogue and segment there at a first start),
 * then `--rounds` rounds alternating which checkout starts first. Each start is the real service
 * in a child process (replica-main.ts, the checkout's own modules); after ready it reports the
 * process CPU time of, in order: the first `GET /api/v1/articles?limit=20`, a second page
 * (`offset=1000`), the first `tag=rare` page, a second one (`offset=20`), the first `tag=topic-7`
 * page (3 s after ready, once the background work after ready is done); and the memory after a
 * full GC then and after those requests (heapUsed, external,
 * arrayBuffers, RSS). CPU time (`process.cpuUsage` of the child) is the figure that a loaded
 * machine disturbs least.
 *
 * `node -r ts-node/register/transpile-only bench/content/listing.ts [size] --base <root> [--rounds n] [--data <dir>]`
 */
import { spawn } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadVaswani } from '../../tools/corpus/vaswani';
import { ingestGrown, settledFile } from '../search/restart';

const ROOT = join(__dirname, '..', '..');
const TYPES = ['article', 'article', 'project', 'experience'];

/** The bench's items: types and tags by number. */
const shape = (item: object, n: number) => ({
  ...item,
  type: TYPES[n % 4],
  tags: [`Topic-${n % 50}`, ...(n % 100 === 0 ? ['Rare'] : [])],
});

interface Replica {
  readonly port: number;
  readonly readyMs: number;
  readonly readyCpuMs: number;
  ask(what: 'cpu' | 'mem'): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** The service of `root` on `dataDir` (replica-main.ts), once ready. */
function start(root: string, dataDir: string): Promise<Replica> {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--max-old-space-size=16000',
      '-r',
      'ts-node/register/transpile-only',
      join(ROOT, 'bench', 'content', 'replica-main.ts'),
      root,
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        ENVIRONMENT: 'testing',
        RATELIMIT_ENABLED: 'false',
        LOG_LEVEL: 'silent',
        SEARCH_CACHE_SIZE: '1',
        TS_NODE_TRANSPILE_ONLY: 'true',
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (l) => waiting.shift()?.(l));
  const next = () => new Promise<string>((r) => waiting.push(r));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`replica exited with ${code}`)));
    void next().then((first) => {
      const m = /LISTENING (\d+) (\d+) (\d+)/.exec(first);
      if (!m) return reject(new Error(`unexpected: ${first}`));
      child.removeAllListeners('exit');
      resolve({
        port: Number(m[1]),
        readyMs: Number(m[2]),
        readyCpuMs: Number(m[3]),
        ask: async (what) => {
          const line = next();
          child.stdin.write(`${what}\n`);
          return JSON.parse(await line) as Record<string, unknown>;
        },
        stop: () =>
          new Promise<void>((r) => {
            child.once('exit', () => r());
            child.stdin.end();
          }),
      });
    });
  });
}

/** A copy of `from`'s content files and segment in `to` (hard links). */
function linkCopy(from: string, to: string): void {
  mkdirSync(join(to, 'search-index'), { recursive: true });
  for (const f of readdirSync(from)) if (/^content-\d+\.(snapshot|log)$/.test(f)) linkSync(join(from, f), join(to, f));
  const seg = join(from, 'search-index');
  if (existsSync(seg)) for (const f of readdirSync(seg)) linkSync(join(seg, f), join(to, 'search-index', f));
}

/** Wait after ready before measuring, ms. */
const SETTLE_MS = 3000;

const MB = (b: unknown) => Math.round(Number(b) / 1048576);
const memOf = (r: Record<string, unknown>) => {
  const m = r.mem as Record<string, number>;
  return {
    heapUsedMb: MB(m.heapUsed),
    externalMb: MB(m.external),
    arrayBuffersMb: MB(m.arrayBuffers),
    rssMb: MB(m.rss),
  };
};

/** One start of `root` on `dir`: ready, the CPU ms of each request in order, memory at ready and after. */
async function measure(root: string, dir: string) {
  const load = Math.round(loadavg()[0] * 10) / 10;
  const r = await start(root, dir);
  try {
    // The background work after ready (the vocabulary's first build) is left to finish first.
    await new Promise((done) => setTimeout(done, SETTLE_MS));
    const atReady = memOf(await r.ask('mem'));
    const cpuMs: Record<string, number> = {};
    for (const [name, query] of [
      ['firstPage', 'limit=20'],
      ['laterPage', 'limit=20&offset=1000'],
      ['firstRare', 'tag=rare&limit=20'],
      ['laterRare', 'tag=rare&limit=20&offset=20'],
      ['firstTopic', 'tag=topic-7&limit=20'],
    ]) {
      const before = (await r.ask('cpu')).cpu as number;
      const res = await fetch(`http://127.0.0.1:${r.port}/api/v1/articles?${query}`);
      const body = (await res.json()) as { total: number; items: unknown[] };
      if (res.status !== 200 || body.items.length === 0)
        throw new Error(`${query}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      cpuMs[name] = Math.round(((await r.ask('cpu')).cpu as number) - before) / 1000;
    }
    return { load, readyMs: r.readyMs, readyCpuMs: r.readyCpuMs, cpuMs, atReady, after: memOf(await r.ask('mem')) };
  } finally {
    await r.stop();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const size = Number(args.find((a) => /^\d+$/.test(a)) ?? 200_000);
  const base = flag('--base');
  if (!base) throw new Error('--base <root> is required');
  const rounds = Number(flag('--rounds') ?? 3);
  const keep = flag('--data');
  const data = keep ?? mkdtempSync(join(tmpdir(), 'listing-'));
  const source = join(data, 'source');
  try {
    if (!existsSync(source)) {
      const env = {
        DATA_DIR: source,
        ENVIRONMENT: 'testing',
        RATELIMIT_ENABLED: 'false',
        LOG_LEVEL: 'silent',
        SEARCH_CACHE_SIZE: '1',
      };
      const seconds = await ingestGrown(ROOT, env, loadVaswani(), size, shape);
      process.stderr.write(`ingested ${size} in ${Math.round(seconds)} s\n`);
    }
    const trees = { this: ROOT, base };
    for (const [label, root] of Object.entries(trees)) {
      const dir = join(data, label);
      if (existsSync(dir)) continue;
      linkCopy(source, dir);
      // A first start writes this checkout's catalogue and segment (in the background, after ready).
      const since = Date.now();
      const r = await start(root, dir);
      await settledFile(join(dir, 'content.catalogue'), since);
      await settledFile(join(dir, 'search-index', 'search-segment.bin'), 0);
      await r.stop();
    }
    const out: Record<string, unknown[]> = { this: [], base: [] };
    for (let k = 0; k < rounds; k++) {
      for (const label of k % 2 === 0 ? ['this', 'base'] : ['base', 'this']) {
        const m = await measure(trees[label as 'this' | 'base'], join(data, label));
        out[label].push(m);
        process.stderr.write(`${label} ${JSON.stringify(m)}\n`);
      }
    }
    process.stdout.write(`${JSON.stringify({ size, rounds: out })}\n`);
  } finally {
    if (keep === undefined) rmSync(data, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
