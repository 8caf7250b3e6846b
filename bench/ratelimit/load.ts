/** A typed sliver of autocannon (it ships no types), for driving one contestant. */
interface AutocannonOptions {
  readonly url: string;
  readonly connections: number;
  readonly pipelining?: number;
  readonly duration?: number;
  readonly amount?: number;
}

interface AutocannonResult {
  readonly requests: { readonly average: number; readonly total: number };
  readonly latency: { readonly p99: number; readonly average: number };
  readonly duration: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: AutocannonOptions) => Promise<AutocannonResult>;

/** One load run's figures. */
export interface LoadResult {
  /** Requests per second, averaged over the run. */
  readonly rps: number;
  /** 99th percentile latency, ms. */
  readonly p99: number;
  readonly total: number;
  /** Non-2xx answers, errors and timeouts: must be 0 (nothing refused, nothing failed). */
  readonly bad: number;
}

/** Drives `url` with `connections` keep-alive connections for `seconds`, or for `amount` requests. */
export async function load(
  url: string,
  opts: { connections: number; seconds?: number; amount?: number },
): Promise<LoadResult> {
  const r = await autocannon({
    url,
    connections: opts.connections,
    pipelining: 1,
    ...(opts.amount !== undefined ? { amount: opts.amount } : { duration: opts.seconds ?? 5 }),
  });
  return {
    rps: r.requests.total / r.duration,
    p99: r.latency.p99,
    total: r.requests.total,
    bad: r.non2xx + r.errors + r.timeouts,
  };
}
