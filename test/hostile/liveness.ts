import { request as httpRequest } from 'node:http';
import { METRICS } from '../../contract/metrics';
import { PATHS } from '../../contract/service';

/** What a liveness watch saw. */
export interface LivenessReport {
  /** Probes of `/health/live` answered 200. */
  readonly answered: number;
  /**
   * What failed: probes not answered 200 (an error, another status, or no answer at all within
   * the hang guard), and every scrape in which the service's own event-loop delay was over the
   * budget. Empty when the service stayed live throughout.
   */
  readonly missed: readonly string[];
  /** The longest stall the service measured in itself over the watch (CPU time it held its loop), ms. */
  readonly loopBusyMaxMs: number;
  /** The longest event-loop delay the service measured in itself, by the clock, ms: shown, not judged (it counts waiting for a core). */
  readonly loopDelayMaxMs: number;
  /** The slowest probe as this client timed it, ms: shown, never judged (it counts this process's wait for a core too). */
  readonly slowestProbeMs: number;
}

/** No answer at all this long is a hang, not a slow machine. */
const PROBE_HANG_GUARD_MS = 30_000;

function get(port: number, path: string): Promise<{ status: number; text: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
          ms: Date.now() - started,
        }),
      );
    });
    req.setTimeout(PROBE_HANG_GUARD_MS, () => req.destroy(new Error(`no answer in ${PROBE_HANG_GUARD_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** The value of an unlabelled gauge in exposition text, or NaN when the text has none. */
export function gaugeValue(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
}

/** The service's event-loop figures since its previous scrape, ms (each scrape starts a new interval). */
async function loopFigures(port: number): Promise<{ busyMs: number; delayMs: number }> {
  const res = await get(port, PATHS.metrics);
  const busyMs = gaugeValue(res.text, METRICS.eventLoopBusyMax) * 1000;
  const delayMs = gaugeValue(res.text, METRICS.eventLoopDelayMax) * 1000;
  if (res.status !== 200 || Number.isNaN(busyMs) || Number.isNaN(delayMs))
    throw new Error(`${PATHS.metrics} answered ${res.status} without ${METRICS.eventLoopBusyMax}`);
  return { busyMs, delayMs };
}

/**
 * Watches a service process's liveness while a hostile workload runs: whether `/health/live`
 * answers 200 (asked every `everyMs` on a fresh connection, the way a kubelet would), and how long
 * the service held its event loop, measured where it is decided: in the service process, by its
 * own figures (service/metrics/event-loop-delay.ts), scraped every `everyMs`.
 *
 * A stall is judged against `budgetMs` (a kubelet's probe timeout, 1 s by default) by
 * `event_loop_busy_max`: the longest delay of the loop counted in the CPU time the event-loop thread spent in
 * it. Never by this client's round trip, nor by the delay's clock time: on a busy machine the
 * service waits for a core too, and a starved core is the machine's doing, not the service's. In
 * issue 36 a probe from this process timed out at 1 s, and then the service's own clock-time delay
 * reached 1.4 s at a load of 9 on 2 cores, while the work it held its loop for was far shorter.
 * The first scrape discards what the process did before the watch (start, ingest).
 */
export async function watchLiveness(port: number, opts: { everyMs?: number; budgetMs?: number } = {}) {
  const everyMs = opts.everyMs ?? 100;
  const budgetMs = opts.budgetMs ?? 1000;
  let answered = 0;
  let slowestProbeMs = 0;
  let delayMaxMs = 0;
  let busyMaxMs = 0;
  const missed: string[] = [];
  let stopped = false;
  const scrape = async (at: string) => {
    const { busyMs, delayMs } = await loopFigures(port);
    delayMaxMs = Math.max(delayMaxMs, delayMs);
    busyMaxMs = Math.max(busyMaxMs, busyMs);
    if (busyMs > budgetMs)
      missed.push(
        `${at}: the service held its event loop ${busyMs.toFixed(0)} ms of CPU time (${METRICS.eventLoopBusyMax}), over ${budgetMs} ms`,
      );
  };
  await loopFigures(port);
  const pause = () => new Promise((r) => setTimeout(r, everyMs));
  const probes = (async () => {
    while (!stopped) {
      const at = new Date().toISOString();
      try {
        const res = await get(port, PATHS.live);
        if (res.status === 200) answered++;
        else missed.push(`${at}: /health/live answered ${res.status}`);
        slowestProbeMs = Math.max(slowestProbeMs, res.ms);
      } catch (e) {
        missed.push(`${at}: /health/live ${(e as Error).message}`);
      }
      await pause();
    }
  })();
  const scrapes = (async () => {
    while (!stopped) {
      const at = new Date().toISOString();
      try {
        await scrape(at);
      } catch (e) {
        missed.push(`${at}: ${(e as Error).message}`);
      }
      await pause();
    }
  })();
  return {
    /** Stops watching (a last scrape covers the time since the previous one) and reports. */
    async stop(): Promise<LivenessReport> {
      stopped = true;
      await Promise.all([probes, scrapes]);
      await scrape(new Date().toISOString());
      return { answered, missed, loopBusyMaxMs: busyMaxMs, loopDelayMaxMs: delayMaxMs, slowestProbeMs };
    },
  };
}
