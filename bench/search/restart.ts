/**
 * Restart to ready at a grown corpus size, with the persisted segment intact and without it:
 * the real service in a child process (file store in one DATA_DIR), Vaswani grown to `size`
 * (default 200,000) ingested through `POST /api/ingest-batch`, then restarts on the filled
 * DATA_DIR, alternating: `INDEX_DIR=off` (reload the content, build the index: what every start
 * did before), and the default (reload the content, load the segment). Each figure is from the
 * start of `main` (modules loaded) to `LISTENING` with the content loaded and indexed
 * (`server-main.ts`), wall time and, where the server prints it, process CPU time. With
 * `--base <root>` each round also starts the service of another checkout (`<root>/bench/search/
 * server-main.ts`, which must exist there) on the same DATA_DIR with its segment in a folder of
 * its own (`INDEX_DIR=<DATA_DIR>/search-index-base`, written by one start of it before the
 * rounds), for an A/B against it; it reads the content in whatever record form this branch wrote.
 *
 * With `--data <dir>` the filled DATA_DIR is kept there (and reused when it already holds content:
 * no ingest), so that runs after the first measure the starts only; a reused DATA_DIR gets one
 * start of this branch first, which writes the content catalogue (`content.catalogue`) when it
 * has none. `--no-rebuild` leaves out the `INDEX_DIR=off` starts (a minute and a half each at 1M).
 * Each start also reports the resident set size at ready (`VmRSS` of the child, read when it
 * prints `LISTENING`) and the 1-minute load average at its start.
 *
 * `node -r ts-node/register/transpile-only bench/search/restart.ts [size] [--rounds n] [--base <root>] [--data <dir>] [--no-rebuild]`
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { growCorpus } from '../../tools/corpus/grow-corpus';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';

async function post(url: string, body: unknown): Promise<{ status: number }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return { status: res.status };
}

export interface Started {
  readonly port: number;
  readonly readyMs: number;
  /** Process CPU time to ready, when the server prints it. */
  readonly cpuMs: number | undefined;
  /** Resident set size at ready, MB. */
  readonly rssMb: number | undefined;
  /** 1-minute load average when the start began. */
  readonly load: number;
  stop(): Promise<void>;
}

/** The service of checkout `root` in a child process (with `nodeArgs` before its script, e.g. `--cpu-prof`); resolves once it is ready. */
export function startAt(
  root: string,
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): Promise<Started & { readonly pid: number }> {
  const load = Math.round(loadavg()[0] * 10) / 10;
  const child = spawn(
    process.execPath,
    [...nodeArgs, '-r', 'ts-node/register/transpile-only', join(root, 'bench', 'search', 'server-main.ts')],
    {
      cwd: root,
      env: { ...process.env, ...env, TS_NODE_TRANSPILE_ONLY: 'true' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('server did not start in 300 s')), 300_000);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /LISTENING (\d+) (\d+)(?: (\d+))?/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      let rssMb: number | undefined;
      try {
        const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (kb) rssMb = Math.round(Number(kb[1]) / 1024);
      } catch {
        rssMb = undefined;
      }
      resolve({
        pid: child.pid!,
        rssMb,
        load,
        port: Number(m[1]),
        readyMs: Number(m[2]),
        cpuMs: m[3] === undefined ? undefined : Number(m[3]),
        stop: () =>
          new Promise<void>((r) => {
            child.once('exit', () => r());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/**
 * Starts the service of checkout `root` with `env`, ingests Vaswani grown to `size` through `POST
 * /api/ingest-batch` (1,000 a request), each item as `shape` makes it (its number given), stops
 * it; the ingest's seconds.
 */
export async function ingestGrown(
  root: string,
  env: Record<string, string>,
  v: Vaswani,
  size: number,
  shape: (item: object, n: number) => object = (i) => i,
): Promise<number> {
  const a = await startAt(root, env);
  // Item ids are slugs: copy c of doc-n becomes doc-n-cc.
  const items = growCorpus(v.items, size).map((i, n) => shape({ ...i, id: i.id.replace('~', '-c') }, n));
  const t0 = performance.now();
  for (let i = 0; i < items.length; i += 1000) {
    const r = await post(`http://127.0.0.1:${a.port}/api/ingest-batch`, { items: items.slice(i, i + 1000) });
    if (r.status !== 201) throw new Error(`ingest-batch answered ${r.status}`);
  }
  const seconds = (performance.now() - t0) / 1000;
  await a.stop();
  return seconds;
}

/** Waits until `file` exists and has not changed for `quietMs` (a segment written in the background). */
export async function settledFile(file: string, since: number, quietMs = 3000, maxMs = 180_000): Promise<void> {
  const t0 = Date.now();
  let last = '';
  let stableSince = Date.now();
  while (Date.now() - t0 < maxMs) {
    const s = existsSync(file) ? statSync(file) : undefined;
    const sig = s && s.mtimeMs >= since ? `${s.mtimeMs}:${s.size}` : '';
    if (sig !== last) {
      last = sig;
      stableSince = Date.now();
    } else if (sig && Date.now() - stableSince >= quietMs) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${file} was not written within ${maxMs} ms`);
}

export async function restart(size: number, rounds: number, base?: string, keep?: string, rebuild = true) {
  const root = join(__dirname, '..', '..');
  const v = loadVaswani();
  const reuse = keep !== undefined && existsSync(join(keep, 'search-index', 'search-segment.bin'));
  const dataDir = keep ?? mkdtempSync(join(tmpdir(), 'search-restart-'));
  const env = {
    DATA_DIR: dataDir,
    ENVIRONMENT: 'testing',
    RATELIMIT_ENABLED: 'false',
    LOG_LEVEL: 'silent',
    SEARCH_CACHE_SIZE: '1',
  };
  const segment = join(dataDir, 'search-index', 'search-segment.bin');
  const out: Record<string, number[]> = { rebuild: [], segment: [], ...(base ? { baseSegment: [] } : {}) };
  const cpu: Record<string, Array<number | undefined>> = {
    rebuild: [],
    segment: [],
    ...(base ? { baseSegment: [] } : {}),
  };
  const rss: Record<string, Array<number | undefined>> = {
    rebuild: [],
    segment: [],
    ...(base ? { baseSegment: [] } : {}),
  };
  const load: Record<string, number[]> = { rebuild: [], segment: [], ...(base ? { baseSegment: [] } : {}) };
  const note = (what: string, s: Started) => {
    out[what].push(s.readyMs);
    cpu[what].push(s.cpuMs);
    rss[what].push(s.rssMb);
    load[what].push(s.load);
  };
  const baseEnv = { ...env, INDEX_DIR: join(dataDir, 'search-index-base') };
  const baseSegment = join(baseEnv.INDEX_DIR, 'search-segment.bin');
  let ingestSeconds = 0;
  let firstStartMs = 0;
  try {
    if (!reuse) {
      ingestSeconds = await ingestGrown(root, env, v, size);
      // The first start after the ingest re-indexes what the last merge had not covered, then
      // persists a segment of everything (in the background): wait for it.
      const since = Date.now();
      const first = await startAt(root, env);
      await settledFile(segment, since);
      await first.stop();
      firstStartMs = first.readyMs;
    }
    if (reuse) {
      // Writes the content catalogue of this DATA_DIR if it has none (in the background, after ready).
      const since = Date.now();
      const warm = await startAt(root, env);
      await settledFile(join(dataDir, 'content.catalogue'), existsSync(join(dataDir, 'content.catalogue')) ? 0 : since);
      await warm.stop();
    }
    if (base && !existsSync(baseSegment)) {
      const since = Date.now();
      const b = await startAt(base, baseEnv);
      await settledFile(baseSegment, since);
      await b.stop();
    }
    for (let r = 0; r < rounds; r++) {
      if (rebuild) {
        const off = await startAt(root, { ...env, INDEX_DIR: 'off' });
        note('rebuild', off);
        await off.stop();
      }
      // Alternating which goes first, so neither always starts right after the other's exit.
      const order = base && r % 2 === 1 ? ['base', 'segment'] : ['segment', 'base'];
      for (const which of order) {
        if (which === 'segment') {
          const on = await startAt(root, env);
          note('segment', on);
          await on.stop();
        } else if (base) {
          const b = await startAt(base, baseEnv);
          note('baseSegment', b);
          await b.stop();
        }
      }
    }
    return {
      docs: size,
      ingestSeconds: Math.round(ingestSeconds * 10) / 10,
      firstStartMs,
      segmentBytes: statSync(segment).size,
      readyMs: out,
      cpuMs: cpu,
      rssMb: rss,
      load1: load,
    };
  } finally {
    if (keep === undefined) rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const size = Number(args.find((a) => /^\d+$/.test(a)) ?? 200_000);
  restart(size, Number(flag('--rounds') ?? 3), flag('--base'), flag('--data'), !args.includes('--no-rebuild')).then(
    (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
