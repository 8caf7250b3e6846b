/**
 * Search over HTTP at a grown corpus size: the real service in a child process (file store,
 * result cache of one entry, so every request is scored), the grown Vaswani corpus ingested
 * through `POST /api/ingest-batch`, then autocannon at 8 connections with the full queries and
 * with their 2-word forms. `npx ts-node -T bench/search/http-grown.ts [size]` (default 200,000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { growCorpus, twoWordQueries } from '../../tools/corpus/grow-corpus';
import { load, post, startServer, type Speed } from './run';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';

/** One HTTP run at one size. */
export interface HttpGrown {
  readonly docs: number;
  readonly ingestSeconds: number;
  /** Process start to ready on the filled DATA_DIR (restart: reload and index everything). */
  readonly restartSeconds: number;
  readonly full: Speed;
  readonly short: Speed;
}

/** Ingests Vaswani grown to `size`, restarts the service on it, and loads it with full and 2-word queries. */
export async function httpGrown(v: Vaswani, size: number, seconds: number): Promise<HttpGrown> {
  const dataDir = mkdtempSync(join(tmpdir(), 'search-http-grown-'));
  const env = { DATA_DIR: dataDir, ENVIRONMENT: 'testing', RATELIMIT_ENABLED: 'false', LOG_LEVEL: 'silent', SEARCH_CACHE_SIZE: '1' };
  try {
    const a = await startServer(env);
    // Item ids are slugs: copy c of doc-n becomes doc-n-cc.
    const items = growCorpus(v.items, size).map((i) => ({ ...i, id: i.id.replace('~', '-c') }));
    const t0 = performance.now();
    for (let i = 0; i < items.length; i += 1000) {
      const r = await post(`http://127.0.0.1:${a.port}/api/ingest-batch`, { items: items.slice(i, i + 1000) });
      if (r.status !== 201) throw new Error(`ingest-batch answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
    }
    const ingestSeconds = (performance.now() - t0) / 1000;
    await a.stop();
    const b = await startServer(env);
    const texts = v.queries.map((q) => q.text);
    const path = (q: string) => `/api/search?q=${encodeURIComponent(q)}&limit=10`;
    const full = await load(b.port, texts.map(path), seconds);
    const short = await load(b.port, twoWordQueries(texts).map(path), seconds);
    await b.stop();
    return { docs: size, ingestSeconds, restartSeconds: b.readyMs / 1000, full, short };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  httpGrown(loadVaswani(), Number(process.argv[2] ?? 200_000), 10).then(
    (r) => process.stdout.write(`${JSON.stringify(r, null, 1)}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
