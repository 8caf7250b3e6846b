/** Traffic for the e2e scenarios: bursts and steady streams from one loopback client address. */
import type { ServiceProcess, ServiceResponse } from '../harness/service-process';

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

/** Traffic that runs until stopped: one request every `everyMs`, statuses recorded. */
export function steadyTraffic(service: ServiceProcess, from: string, path: (i: number) => string, everyMs = 100) {
  const statuses: number[] = [];
  const errors: string[] = [];
  let running = true;
  const done = (async () => {
    for (let i = 0; running; i++) {
      try {
        statuses.push((await service.request(path(i), { from })).status);
      } catch (e) {
        errors.push(e instanceof Error ? e.message : String(e));
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    statuses,
    errors,
    async stop() {
      running = false;
      await done;
    },
  };
}

