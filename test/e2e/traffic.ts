/** Traffic for the e2e scenarios: bursts and steady streams from one loopback client address. */
import type { ServiceProcess, ServiceResponse } from '../../tools/harness/service-process';

/** Sends `n` requests from `from`, at most `concurrency` at a time, and returns the responses in order. */
export async function burst(
  service: ServiceProcess,
  n: number,
  path: (i: number) => string,
  from: string,
  concurrency = n,
): Promise<ServiceResponse[]> {
  const out: ServiceResponse[] = new Array<ServiceResponse>(n);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      out[i] = await service.request(path(i), { from });
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, worker));
  return out;
}

/** One answered request of a steady stream. */
export interface TrafficResult {
  readonly path: string;
  readonly status: number;
}

/** Traffic that runs until stopped: one request every `everyMs`, each result recorded in order. */
export function steadyTraffic(service: ServiceProcess, from: string, path: (i: number) => string, everyMs = 100) {
  const results: TrafficResult[] = [];
  const errors: string[] = [];
  let running = true;
  const done = (async () => {
    for (let i = 0; running; i++) {
      const p = path(i);
      try {
        results.push({ path: p, status: (await service.request(p, { from })).status });
      } catch (e) {
        errors.push(`${p}: ${e instanceof Error ? e.message : String(e)}`);
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    results,
    errors,
    async stop() {
      running = false;
      await done;
    },
  };
}
