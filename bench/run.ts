/**
 * `make bench`: every benchmark, one after the other (they share two cores, so never at once).
 * Each writes its own `bench/results/*.md`; this prints them together. BENCHMARKS.md holds the
 * curated copy of a run.
 */
import { run as rateLimitCluster } from './ratelimit/cluster';
import { run as rateLimit } from './ratelimit/run';
import { run as filters } from './search/filters';
import { run as hybrid } from './search/hybrid';
import { run as search } from './search/run';
import { run as semanticQuality } from './search/semantic-quality';
import { run as deletes } from './search/delete';
import { run as text } from './text/run';
import { run as vectorAdds } from './vectors/add-stall';
import { run as vectorRoom } from './vectors/room';
import { run as vectors } from './vectors/run';

/** Vectors in the vector benches: 100,000 by default (minutes); 1000000 for issue 41's floors (an hour or more). */
const VECTOR_SIZE = Number(process.env.VECTOR_BENCH_SIZE ?? 100_000);

/**
 * Documents of the filters bench, comma-separated: 200,000 by default; `200000,1000000` for issue
 * 40's floors at both sizes (the 1M part ~2.5 min and ~4 GB more).
 */
function filterSizes(value = process.env.FILTERS_BENCH_SIZES ?? '200000'): number[] {
  const sizes = value.split(',').map((x) => Number(x.trim()));
  if (!sizes.length || sizes.some((n) => !Number.isInteger(n) || n < 1000 || n > 10_000_000))
    throw new Error(
      `FILTERS_BENCH_SIZES=${JSON.stringify(value)}: accepted is a comma list of document counts from 1000 to 10000000, e.g. 200000,1000000`,
    );
  return sizes;
}

async function main(): Promise<void> {
  const started = Date.now();
  const sizes = filterSizes();
  const parts: string[] = [];
  for (const [name, bench] of [
    ['rate limiting', rateLimit],
    ['rate limiting: Redis Cluster vs standalone', rateLimitCluster],
    ['search', search],
    ['search: deletes at 1M (issue 39)', deletes],
    [
      `search: filters, facets, browsing (${sizes.map((n) => n.toLocaleString('en')).join(' and ')} documents)`,
      () => filters(sizes),
    ],
    ['text passes before and after issue 29', text],
    ['vector index libraries (issue 41)', () => vectors([String(VECTOR_SIZE), '--glove', '100000'])],
    ['the vector index of the service (issue 41)', () => vectorRoom(VECTOR_SIZE)],
    ["the loop while vectors are added, the feed's copies held (issue 41)", () => vectorAdds(VECTOR_SIZE)],
    ['hybrid against keyword search (issue 41, VECTOR_BENCH_SIZE documents)', () => hybrid([VECTOR_SIZE])],
    ['search by meaning: quality with GloVe vectors (issue 41)', () => semanticQuality()],
  ] as const) {
    process.stderr.write(`\n== ${name} ==\n`);
    parts.push(await bench());
  }
  process.stdout.write(
    `${parts.join('\n\n')}\n\n_All benchmarks took ${Math.round((Date.now() - started) / 1000)} s._\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
