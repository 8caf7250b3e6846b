import { request as httpRequest } from 'node:http';

/** What a liveness watch saw. */
export interface LivenessReport {
  /** Probes answered 200. */
  readonly answered: number;
  /** Probes that failed or were not answered 200 within the budget. */
  readonly missed: readonly string[];
  /** The slowest answer, ms. */
  readonly slowestMs: number;
}

function probe(port: number, budgetMs: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/health/live', agent: false }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(Date.now() - started) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.setTimeout(budgetMs, () => req.destroy(new Error(`no answer in ${budgetMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Asks `/health/live` every `everyMs` on a fresh connection while a hostile workload runs, the way
 * a kubelet would. A probe not answered 200 within `budgetMs` is a miss: the event loop was held
 * long enough for Kubernetes to count a failed probe.
 */
export function watchLiveness(port: number, opts: { everyMs?: number; budgetMs?: number } = {}) {
  const everyMs = opts.everyMs ?? 100;
  const budgetMs = opts.budgetMs ?? 1000;
  let answered = 0;
  let slowestMs = 0;
  const missed: string[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = new Date().toISOString();
      try {
        const ms = await probe(port, budgetMs);
        answered++;
        slowestMs = Math.max(slowestMs, ms);
      } catch (e) {
        missed.push(`${at}: ${(e as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    /** Stops probing and reports. */
    async stop(): Promise<LivenessReport> {
      stopped = true;
      await loop;
      return { answered, missed, slowestMs };
    },
  };
}
