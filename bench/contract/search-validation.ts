/**
 * The cost of validating `GET /api/search`'s query on the hot path: this tree's `parseSearch`
 * (the route's zod schema) beside a baseline tree's (`BENCH_BASE=<dir>`, e.g. the hand-written
 * parser before issue 25), on the same parsed query objects Express hands the route, in
 * interleaved rounds; reports ns per call, median over rounds, and the ratio.
 *
 *   BENCH_BASE=/tmp/base npx ts-node -T bench/contract/search-validation.ts
 */
import { resolve } from 'node:path';
import { parseSearch } from '../../service/routes/search';

type Parse = (query: Record<string, unknown>) => unknown;

const QUERIES: ReadonlyArray<Record<string, unknown>> = [
  { q: 'bench' },
  { q: 'rate limit', limit: '10' },
  { q: 'kubernetes operators', type: 'article', limit: '20', offset: '40' },
  { q: 'redis', tag: 'operations' },
];

function time(parse: Parse, n: number): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) parse(QUERIES[i & 3]);
  return Number(process.hrtime.bigint() - t0) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function main(): void {
  const contestants: Array<[string, Parse]> = [['this tree (zod schema)', (q) => parseSearch(q)]];
  if (process.env.BENCH_BASE) {
    const base = resolve(process.env.BENCH_BASE);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const old = require(`${base}/service/routes/search`) as {
      parseSearch: (get: (name: string) => unknown) => unknown;
    };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { queryString } = require(`${base}/service/http/query`) as {
      queryString: (req: unknown, name: string) => unknown;
    };
    contestants.push(['baseline (BENCH_BASE)', (q) => old.parseSearch((name) => queryString({ query: q }, name))]);
  }
  const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
  const n = Number(process.env.BENCH_CALLS ?? 300_000);
  for (const [, p] of contestants) time(p, n); // warm up
  const ns = new Map<string, number[]>(contestants.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, p] of r % 2 ? [...contestants].reverse() : contestants) ns.get(name)!.push(time(p, n));
  }
  for (const [name] of contestants)
    process.stdout.write(
      `${name}: ${median(ns.get(name)!).toFixed(0)} ns / call (median of ${rounds} rounds of ${n})\n`,
    );
  if (contestants.length === 2) {
    const ratio = median(ns.get(contestants[0][0])!) / median(ns.get(contestants[1][0])!);
    const delta = median(ns.get(contestants[0][0])!) - median(ns.get(contestants[1][0])!);
    process.stdout.write(
      `ratio this / baseline: ${ratio.toFixed(2)}; difference ${(delta / 1000).toFixed(2)} µs per request\n`,
    );
  }
}

main();
