import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../tools/harness/ports';
import { RedisServer } from '../../tools/harness/redis';
import { ServiceProcess } from '../../tools/harness/service-process';
import { watchLiveness } from './liveness';

/**
 * Issue 29, item 5: a development start (demo content on by default) whose kvstore is unreachable
 * or refuses the password used to exit with `fatal: the key-value store (KVSTORE_URL) is
 * unreachable…` while writing the demo. It now skips the demo with a warning and serves degraded.
 * The real process, against a closed port and against a real redis-server given the wrong password.
 */

function developmentEnv(extra: Record<string, string>): Record<string, string | undefined> {
  // debug: the kvstore connection logs its reconnection attempts there (what the test waits on).
  return { PATH: process.env.PATH, HOME: process.env.HOME, ENVIRONMENT: 'development', LOG_LEVEL: 'debug', ...extra };
}

const RECONNECTING = 'kvstore reconnecting';

/** The number of the kvstore connection's reconnection attempt a log line reports, or 0. */
function reconnectAttempt(line: string): number {
  if (!line.includes(RECONNECTING)) return 0;
  const attempt = (JSON.parse(line) as { attempt?: number }).attempt;
  return typeof attempt === 'number' ? attempt : 0;
}

interface Health {
  status: string;
  kvstore: string;
  content?: { store: string; items: number };
}

async function expectDegradedWithoutDemo(svc: ServiceProcess): Promise<void> {
  const watch = await watchLiveness(svc.port, { everyMs: 50 });
  // A reconnection attempt (and the heartbeats before it: it is scheduled 1.6-2 s after the one
  // before once the first few failed) while the probes run, by the service's own account: the test
  // waited 2.5 s for some before.
  const seen = Math.max(0, ...svc.process.logs().split('\n').map(reconnectAttempt));
  await svc.logged((line) => reconnectAttempt(line) > seen);
  const health = await svc.request('/health');
  expect(health.status).toBe(200);
  const h = health.json<Health>();
  expect(h.status).toBe('degraded');
  expect(h.kvstore).toBe('disconnected');
  expect(h.content).toMatchObject({ store: 'kvstore', items: 0 });
  // Reads and search still answer (from memory, empty); writes say why they cannot be stored.
  expect((await svc.request('/api/search?q=rate+limiting')).status).toBe(200);
  const write = await svc.request('/api/ingest', { method: 'POST', body: { type: 'article', title: 'T', body: 'b' } });
  expect(write.status).toBe(503);
  expect(write.json<{ error: string }>().error).toBe('store_unavailable');
  const report = await watch.stop();
  expect(report.missed).toEqual([]);
  expect(svc.running).toBe(true);
  await svc.logged('demo content skipped');
  expect(svc.process.logs()).not.toContain('fatal:');
}

describe('starting in development without a reachable kvstore never exits (issue 29, item 5)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test('KVSTORE_URL on a closed port: ready, /health degraded, the demo skipped with a warning', async () => {
    const closed = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-noredis-'));
    dirs.push(dataDir);
    const svc = await ServiceProcess.start({
      env: developmentEnv({ KVSTORE_URL: `redis://127.0.0.1:${closed}`, DATA_DIR: dataDir }),
    });
    try {
      await expectDegradedWithoutDemo(svc);
    } finally {
      await svc.stop();
    }
  }, 60000);

  test('KVSTORE_URL with the wrong password (WRONGPASS) on a real redis-server: the same', async () => {
    const redis = await RedisServer.start({ password: 'the-right-password' });
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-wrongpass-'));
    dirs.push(dataDir);
    let svc: ServiceProcess | undefined;
    try {
      svc = await ServiceProcess.start({
        env: developmentEnv({ KVSTORE_URL: `redis://:not-the-password@127.0.0.1:${redis.port}`, DATA_DIR: dataDir }),
      });
      await expectDegradedWithoutDemo(svc);
      // Nothing was written to the server the service could not log in to.
      await svc.logged(/WRONGPASS|invalid username-password|NOAUTH/);
    } finally {
      await svc?.stop();
      await redis.stop();
    }
  }, 60000);
});
