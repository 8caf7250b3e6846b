/**
 * Restart to ready right after a bulk ingest, beside restart to ready after quiet time (issue 37,
 * "a graceful stop leaves an intact segment"). Each round, on a fresh DATA_DIR: the real service
 * in a child process (`server-main.ts`, file store), Vaswani grown to `size` (default 200,000)
 * ingested through `POST /api/ingest-batch`, SIGTERM at once (the time from SIGTERM to exit is
 * the stop's), a start on it: **restart after ingest**. That replica then stays idle past the
 * index's idle checkpoint (30 s without writes) until the segment file has settled, is stopped,
 * and the next start is **restart after quiet**. Before issue 37 the stop dropped what the last
 * merge had not persisted, so the restart after an ingest re-indexed it (or, with more than half
 * of the documents missing from the segment, rebuilt the index); since, the stop persists it.
 *
 * With `--base <root>` each round also runs the service of another checkout (its
 * `bench/search/server-main.ts`, e.g. main unpacked in a folder) the same way on a DATA_DIR of
 * its own, alternating which goes first; ratios are given per checkout (after ingest / after
 * quiet) and between them (this / base). Figures are from the start of `main` (modules loaded)
 * to `LISTENING` (content loaded and indexed), wall time and process CPU time.
 *
 * `node -r ts-node/register/transpile-only bench/search/restart-after-ingest.ts [size] [--rounds n] [--base <root>]`
 */
import { join } from 'node:path';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { growCorpus } from '../../tools/corpus/grow-corpus';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';
import { settledFile, startAt } from './restart';

/** The index's idle checkpoint (`checkpointIdleMs`, 30 s) and a margin for its merge to begin. */
const QUIET_MS = 35_000;
const BATCH = 1000;

/** One round of one checkout. */
export interface AfterIngestRound {
  readonly checkout: 'this' | 'base';
  readonly ingestSeconds: number;
  /** SIGTERM to exit right after the ingest (the drain, then persisting the segment since issue 37). */
  readonly stopMs: number;
  /** Restart to ready right after the ingest: wall, CPU. */
  readonly afterIngestMs: number;
  readonly afterIngestCpuMs: number | undefined;
  /** Restart to ready after quiet time (idle checkpoint done): wall, CPU. */
  readonly afterQuietMs: number;
  readonly afterQuietCpuMs: number | undefined;
  readonly segmentBytes: number;
  /** 1-minute load average at the round's start. */
  readonly load: number;
}

/** One round of the checkout at `root` on a fresh DATA_DIR. */
async function round(root: string, checkout: 'this' | 'base', v: Vaswani, size: number): Promise<AfterIngestRound> {
  const dataDir = mkdtempSync(join(tmpdir(), 'restart-after-ingest-'));
  const env = {
    DATA_DIR: dataDir,
    ENVIRONMENT: 'testing',
    RATELIMIT_ENABLED: 'false',
    LOG_LEVEL: 'silent',
    SEARCH_CACHE_SIZE: '1',
  };
  const segment = join(dataDir, 'search-index', 'search-segment.bin');
  const load = Math.round(loadavg()[0] * 10) / 10;
  try {
    const a = await startAt(root, env);
    // Item ids are slugs: copy c of doc-n becomes doc-n-cc (as restart.ts).
    const items = growCorpus(v.items, size).map((i) => ({ ...i, id: i.id.replace('~', '-c') }));
    const t0 = performance.now();
    for (let i = 0; i < items.length; i += BATCH) {
      const res = await fetch(`http://127.0.0.1:${a.port}/api/ingest-batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ items: items.slice(i, i + BATCH) }),
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`ingest-batch answered ${res.status}`);
    }
    const ingestSeconds = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    await a.stop();
    const stopMs = performance.now() - t1;
    const afterIngest = await startAt(root, env);
    // Quiet: past the idle checkpoint, and the segment file unchanged for 3 s (a restore that
    // re-indexed items persists again in the background).
    await new Promise((r) => setTimeout(r, QUIET_MS));
    await settledFile(segment, 0);
    await afterIngest.stop();
    const afterQuiet = await startAt(root, env);
    await afterQuiet.stop();
    return {
      checkout,
      ingestSeconds: Math.round(ingestSeconds * 10) / 10,
      stopMs: Math.round(stopMs),
      afterIngestMs: afterIngest.readyMs,
      afterIngestCpuMs: afterIngest.cpuMs,
      afterQuietMs: afterQuiet.readyMs,
      afterQuietCpuMs: afterQuiet.cpuMs,
      segmentBytes: statSync(segment).size,
      load,
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `rounds` rounds at `size` of this checkout and, with `base`, of that one, alternating which goes first. */
export async function restartAfterIngest(
  size: number,
  rounds: number,
  base?: string,
  log: (line: string) => void = () => undefined,
): Promise<AfterIngestRound[]> {
  const root = join(__dirname, '..', '..');
  const v = loadVaswani();
  const out: AfterIngestRound[] = [];
  for (let r = 0; r < rounds; r++) {
    const order: Array<'this' | 'base'> = base ? (r % 2 ? ['base', 'this'] : ['this', 'base']) : ['this'];
    for (const which of order) {
      const res = await round(which === 'this' ? root : base!, which, v, size);
      log(JSON.stringify(res));
      out.push(res);
    }
  }
  return out;
}

/** The median (the mean of the middle two for an even count). */
const median = (xs: readonly number[]) => {
  const o = [...xs].sort((x, y) => x - y);
  const m = o.length >> 1;
  return o.length % 2 ? o[m] : (o[m - 1] + o[m]) / 2;
};

/**
 * Per checkout, restart to ready after ingest and after quiet (median, range), wall and process
 * CPU, and their ratio; with a base, this / base. Markdown lines. On a shared machine the CPU
 * ratio is the steadier one: wall time there is mostly waiting for a core.
 */
export function afterIngestTable(rounds: readonly AfterIngestRound[]): string[] {
  const s = (ms: number) => (ms / 1000).toFixed(2);
  const cell = (xs: readonly number[]) =>
    `${s(median(xs))} s${xs.length > 1 ? ` (${s(Math.min(...xs))}–${s(Math.max(...xs))})` : ''}`;
  const rows = [
    '| checkout | after ingest, wall | after quiet, wall | ratio, wall | after ingest, CPU | after quiet, CPU | ratio, CPU | SIGTERM to exit after the ingest | rounds, load |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const mid: Record<string, { wall: number; cpu: number }> = {};
  for (const which of ['this', 'base'] as const) {
    const rs = rounds.filter((r) => r.checkout === which);
    if (!rs.length) continue;
    const wi = rs.map((r) => r.afterIngestMs);
    const wq = rs.map((r) => r.afterQuietMs);
    const ci = rs.map((r) => r.afterIngestCpuMs ?? NaN);
    const cq = rs.map((r) => r.afterQuietCpuMs ?? NaN);
    mid[which] = { wall: median(wi), cpu: median(ci) };
    const loads = rs.map((r) => r.load);
    rows.push(
      `| ${which} | ${cell(wi)} | ${cell(wq)} | ${(median(wi) / median(wq)).toFixed(2)}× | ${cell(ci)} | ${cell(cq)} | ${(median(ci) / median(cq)).toFixed(2)}× | ${cell(rs.map((r) => r.stopMs))} | ${rs.length}, ${Math.min(...loads)}–${Math.max(...loads)} |`,
    );
  }
  if (mid.this && mid.base)
    rows.push(
      '',
      `Restart after ingest, this / base: wall ${(mid.this.wall / mid.base.wall).toFixed(2)}×, CPU ${(mid.this.cpu / mid.base.cpu).toFixed(2)}×.`,
    );
  return rows;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const size = Number(args.find((a) => /^\d+$/.test(a)) ?? 200_000);
  restartAfterIngest(size, Number(flag('--rounds') ?? 2), flag('--base'), (line) =>
    process.stderr.write(`${line}\n`),
  ).then(
    (r) => process.stdout.write(`${afterIngestTable(r).join('\n')}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
