import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { METRICS } from '../../../contract/metrics';
import { RedisServer } from '../../../tools/harness/redis';
import { ServiceProcess } from '../../../tools/harness/service-process';
import { WIDE_LIMITS, hostileEnv } from '../../hostile/hostile-env';
import { gaugeValue } from '../../hostile/liveness';

/**
 * Issue 39's floor on the real service process (production settings, the file store in a temp
 * DATA_DIR, rate limits in a real redis-server): a `delete_where` that removes 50,000 of 100,000
 * items — the scan of the in-memory copy, the store's one durable record, the in-memory copy,
 * listings and tag indexes, the search index's removal and the merge that drops the tombstones,
 * with queries answered meanwhile — holds the event loop at most 50 ms of CPU time in any turn.
 */

const TOKEN = 'delete-steps-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const ITEMS = 100_000;
const PER_UPLOAD = 10_000;
const WORDS = ['search', 'index', 'garden', 'river', 'engine', 'music', 'travel', 'kernel', 'bread', 'winter'];

function multipart(boundary: string, content: string): string {
  return `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="items.ndjson"\r\nContent-Type: application/octet-stream\r\n\r\n${content}\r\n--${boundary}--\r\n`;
}

const PERSISTED = 'search segment persisted';

/** The documents of a `search segment persisted` line written at `since` or later (ms since the epoch), or undefined. */
function persistedDocuments(line: string, since = 0): number | undefined {
  if (!line.includes(PERSISTED)) return undefined;
  const { documents, time } = JSON.parse(line) as { documents: number; time: string };
  return Date.parse(time) >= since ? documents : undefined;
}

/** The service's log lines written at `since` or later (ms since the epoch). */
function logSince(svc: ServiceProcess, since: number): string {
  return svc.process
    .logs()
    .split('\n')
    .filter((line) => {
      try {
        return Date.parse((JSON.parse(line) as { time?: string }).time ?? '') >= since;
      } catch {
        return false;
      }
    })
    .join('\n');
}

describe('delete_where in steps on the real process (issue 39)', () => {
  let redis: RedisServer;
  let svc: ServiceProcess;
  let dataDir: string;

  beforeAll(async () => {
    redis = await RedisServer.start();
    dataDir = mkdtempSync(join(tmpdir(), 'svc-delete-steps-'));
    svc = await ServiceProcess.start({
      env: hostileEnv(TOKEN, { ...WIDE_LIMITS, DATA_DIR: dataDir, RATELIMIT_STORAGE_URL: redis.url }),
    });
  }, 60_000);

  afterAll(async () => {
    await svc?.stop();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(svc.running).toBe(true);
  });

  test('a delete_where of 50,000 of 100,000 items holds the event loop at most 50 ms of CPU time', async () => {
    const boundary = 'delete-steps-upload';
    for (let at = 0; at < ITEMS; at += PER_UPLOAD) {
      const lines: string[] = [];
      for (let i = at; i < at + PER_UPLOAD; i++)
        lines.push(
          JSON.stringify({
            type: 'article',
            title: `Steps item ${i}`,
            body: `Item ${i} on ${WORDS[i % 10]} and ${WORDS[(i * 7) % 10]}, number ${i % 997}.`,
            tags: [i % 2 ? 'kept' : 'retired', `group-${i % 50}`],
          }),
        );
      const res = await svc.request('/api/upload', {
        method: 'POST',
        headers: { ...AUTH, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: multipart(boundary, lines.join('\n')),
      });
      expect(res.status).toBe(201);
    }
    // The merges the uploads started are done, by the service's own account: each merge persists
    // the base it made (a line with its documents), and the index merges its tail once it holds an
    // eighth of the live documents (segmented-index.ts, tailFull), so with a base of more than 7/8
    // of them persisted no merge runs until the idle checkpoint 30 s after the last write (which
    // merges all, so a policy that merges later still ends this wait). It waited for two seconds of
    // low CPU before, which a loaded machine's slower process could meet while still merging.
    await svc.logged((line) => (persistedDocuments(line) ?? 0) * 8 > ITEMS * 7);
    const intervalFrom = Date.now();
    await svc.request('/api/metrics/prometheus'); // starts a new interval of the loop-delay metrics

    // A query every 200 ms beside the delete and the merge that follows it (uncached: each its own words).
    let deleting = true;
    let answered = 0;
    const querying = (async () => {
      for (let k = 0; deleting; k++) {
        const res = await svc.request(`/api/search?q=${WORDS[k % 10]}+${WORDS[(k + 3) % 10]}+${k}`);
        expect(res.status).toBe(200);
        answered++;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const deleteSentAt = Date.now();
    const res = await svc.request('/api/ingest-batch', {
      method: 'POST',
      headers: AUTH,
      body: { delete_where: { tag: 'retired' } },
    });
    expect(res.status).toBe(200);
    expect(res.json<{ operations: { delete_where: { count: number } } }>().operations.delete_where.count).toBe(
      ITEMS / 2,
    );
    // The merge that drops the tombstones is done once it persisted its base of the 50,000 kept.
    await svc.logged((line) => persistedDocuments(line, deleteSentAt) === ITEMS / 2);
    deleting = false;
    await querying;
    const metrics = (await svc.request('/api/metrics/prometheus')).text;
    const busy = gaugeValue(metrics, METRICS.eventLoopBusyMax);
    const delay = gaugeValue(metrics, METRICS.eventLoopDelayMax);
    process.stderr.write(`delete_where 50k of 100k: busy max ${busy} s, delay max ${delay} s, ${answered} queries\n`);
    // Over the floor: what ran beside the delete, by the service's own log (compaction, catalogue,
    // merges, segments persisted, each with its time), to narrow down whose step the longest turn was.
    if (busy > 0.05) process.stderr.write(`service log since the interval began:\n${logSince(svc, intervalFrom)}\n`);
    // The process's own measure (svc_ai_search_event_loop_busy_max_seconds): the CPU time its
    // event-loop thread spent in its longest turn, so neither a core it waited for (this machine
    // runs other work beside the suite; the delay max above counts that wait and is shown, not
    // judged) nor its GC helper threads count; a GC pause on the loop's thread does. Before issue
    // 39's steps on the content side: 71 ms, the store write's one step (the matches re-checked
    // and gathered through a Set). Measured since: 29 ms at a load of 12, 42 ms at a load of 20
    // with two 1M benchmarks beside it, once 51.5 ms at a load of 17 before a query's term was
    // assembled in steps (the longest turns are a query's step over a common term after a write,
    // the merge's install and job steps, each ~20-40 ms at 100,000 documents; BENCHMARKS.md
    // "Deletes at scale"). The margin to 50 ms is thin on a machine this loaded: it is what a GC
    // pause on the loop's thread landing in one of those turns may take. Once 60.5 ms in a
    // fresh-clone run, and 75 and 104 ms in 2 of 14 runs at a load of 5-9 (2026-12-05), most likely
    // the content catalogue's writer (it runs after a compaction), whose listing keys' step (30-66
    // ms) and encoding (30-83 ms, profiled beside the delete) were one step each until cut into
    // steps. The measure is the CPU between two ticks of a 10 ms timer: on a busy loop a turn of
    // T shows as up to T + 10 ms.
    expect(answered).toBeGreaterThan(0);
    expect(busy).toBeGreaterThan(0);
    expect(busy).toBeLessThanOrEqual(0.05);
  }, 600_000);
});
