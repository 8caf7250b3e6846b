/**
 * Event-loop stalls of the service as deployed: the real service in a child process (file store
 * in a fresh DATA_DIR, result cache of one entry), Vaswani grown to `size` (default 200,000)
 * ingested through `POST /api/ingest-batch` in batches of 1,000, while one search at a time runs
 * beside it (`GET /api/search`, the 93 Vaswani queries and their 2-word forms in turn). Every
 * second the Prometheus metrics (`PATHS.metrics`) are scraped: the service's own event-loop delay gauges
 * (`svc_ai_search_event_loop_delay_max_seconds` / `_p99_seconds`, each over the interval since
 * the previous scrape) give the longest stall and the worst p99. Also the longest search and
 * ingest request as the client saw them, and the 1-minute load average at the start.
 *
 * `npx ts-node -T bench/search/http-stall.ts [size] [--base <root>] [--rounds n] [--node-args "<args>"]`:
 * with `--base`, the same run against another checkout, alternating which goes first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PATHS } from '../../contract';
import { growCorpus, twoWordQueries } from '../../tools/corpus/grow-corpus';
import { loadVaswani } from '../../tools/corpus/vaswani';
import { startAt } from './restart';
import { post } from './run';

export interface HttpStall {
  readonly checkout: string;
  readonly load: number;
  readonly ingestSeconds: number;
  readonly searches: number;
  /** The service's longest event-loop delay over the ingest, ms. */
  readonly maxStall: number;
  /** The worst per-second p99 of the service's event-loop delay, ms. */
  readonly worstP99: number;
  /** Longest search and ingest-batch request as the client saw them, ms. */
  readonly maxSearch: number;
  readonly maxIngest: number;
}

const gauge = (text: string, name: string): number =>
  Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? 0) * 1000;

export async function httpStall(root: string, size: number, nodeArgs: readonly string[] = []): Promise<HttpStall> {
  const v = loadVaswani();
  const load = Math.round(loadavg()[0] * 10) / 10;
  const dataDir = mkdtempSync(join(tmpdir(), 'search-http-stall-'));
  const env = {
    DATA_DIR: dataDir,
    ENVIRONMENT: 'testing',
    RATELIMIT_ENABLED: 'false',
    LOG_LEVEL: 'silent',
    SEARCH_CACHE_SIZE: '1',
  };
  const s = await startAt(root, env, nodeArgs);
  const base = `http://127.0.0.1:${s.port}`;
  try {
    const items = growCorpus(v.items, size).map((i) => ({ ...i, id: i.id.replace('~', '-c') }));
    const texts = v.queries.map((q) => q.text);
    const queries = [...texts, ...twoWordQueries(texts)];
    let done = false;
    let maxStall = 0;
    let worstP99 = 0;
    let maxSearch = 0;
    let searches = 0;
    const scrape = async () => {
      const text = await (await fetch(`${base}${PATHS.metrics}`)).text();
      maxStall = Math.max(maxStall, gauge(text, 'svc_ai_search_event_loop_delay_max_seconds'));
      worstP99 = Math.max(worstP99, gauge(text, 'svc_ai_search_event_loop_delay_p99_seconds'));
    };
    await post(`${base}/api/ingest-batch`, { items: items.slice(0, 1000) });
    await scrape();
    maxStall = 0;
    worstP99 = 0;
    const scraping = (async () => {
      while (!done) {
        await new Promise((r) => setTimeout(r, 1000));
        await scrape();
      }
    })();
    const searching = (async () => {
      for (let i = 0; !done; i++) {
        const t = performance.now();
        const r = await fetch(`${base}/api/search?q=${encodeURIComponent(queries[i % queries.length])}&limit=10`);
        await r.json();
        if (r.status !== 200) throw new Error(`search answered ${r.status}`);
        maxSearch = Math.max(maxSearch, performance.now() - t);
        searches += 1;
      }
    })();
    const t0 = performance.now();
    let maxIngest = 0;
    for (let at = 1000; at < items.length; at += 1000) {
      const t = performance.now();
      const r = await post(`${base}/api/ingest-batch`, { items: items.slice(at, at + 1000) });
      if (r.status !== 201) throw new Error(`ingest-batch answered ${r.status}`);
      maxIngest = Math.max(maxIngest, performance.now() - t);
    }
    const ingestSeconds = Math.round((performance.now() - t0) / 100) / 10;
    done = true;
    await Promise.all([scraping, searching]);
    const r1 = (x: number) => Math.round(x * 10) / 10;
    return {
      checkout: root,
      load,
      ingestSeconds,
      searches,
      maxStall: r1(maxStall),
      worstP99: r1(worstP99),
      maxSearch: r1(maxSearch),
      maxIngest: r1(maxIngest),
    };
  } finally {
    await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const opt = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const size = Number(args.find((a) => /^\d+$/.test(a)) ?? 200_000);
  const rounds = Number(opt('--rounds') ?? 1);
  const baseRoot = opt('--base');
  const nodeArgs = (opt('--node-args') ?? '').split(' ').filter(Boolean);
  const root = join(__dirname, '..', '..');
  void (async () => {
    for (let r = 0; r < rounds; r++) {
      const order = baseRoot ? (r % 2 === 0 ? [baseRoot, root] : [root, baseRoot]) : [root];
      for (const at of order) process.stdout.write(`${JSON.stringify(await httpStall(at, size, nodeArgs))}\n`);
    }
  })().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
