import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { RedisCluster } from '../../../tools/harness/redis-cluster';
import { RedisServer } from '../../../tools/harness/redis';
import { ServiceProcess } from '../../../tools/harness/service-process';
import { waitFor } from '../../../tools/harness/ports';
import { TlsCerts } from '../../../tools/harness/tls-certs';

const TOKEN = 'tls-test-token';
const PASSWORD = 'tls-s3cret';

/** The service's environment for a kvstore at `url`; `ca` is what Node trusts beside its default CAs. */
function env(url: string, dataDir: string, ca?: string): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ENVIRONMENT: 'production',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    API_TOKEN: TOKEN,
    KVSTORE_URL: url,
    KVSTORE_CONNECT_TIMEOUT_MS: '2000',
    KVSTORE_COMMAND_TIMEOUT_MS: '1000',
    // ip tier: 5 at once, then 1 per hour, so real time never refills it during the test.
    RATE_LIMIT_IP_REQUESTS: '1',
    RATE_LIMIT_IP_WINDOW: '3600',
    RATE_LIMIT_IP_BURST: '5',
    ...(ca ? { NODE_EXTRA_CA_CERTS: ca } : {}),
  };
}

/**
 * Two replicas on one kvstore over TLS: both report it connected (plus `health`), the ip tier's
 * 5-request burst is shared between them (five 200s, then 429s, alternating replicas), and an item
 * ingested through `a` is served by `b`.
 */
async function sharesStateOverTls(
  a: ServiceProcess,
  b: ServiceProcess,
  health: Record<string, string>,
  item: { id: string; title: string },
): Promise<void> {
  for (const svc of [a, b]) {
    expect((await svc.request('/health')).json()).toMatchObject({
      kvstore: 'connected',
      ...health,
      rate_limit_backend: 'kvstore',
    });
  }
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++)
    statuses.push((await (i % 2 ? b : a).request('/api/v1/articles', { from: '127.0.0.9' })).status);
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
  const body = { ...item, type: 'article', body: 'stored through one replica, read through the other' };
  const ingested = await a.request('/api/ingest', {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
    body,
    from: '127.0.0.10',
  });
  expect(ingested.status).toBeLessThan(300);
  await waitFor(
    'replica b to serve the item ingested through a',
    async () => (await b.request(`/api/v1/articles/${item.id}`, { from: '127.0.0.11' })).status === 200,
    {
      timeoutMs: 10000,
      intervalMs: 200,
    },
  );
}

describe('a TLS-only, password-protected redis-server (rediss://) behind two real service processes', () => {
  let certs: TlsCerts;
  let redis: RedisServer;
  let dataDir: string;
  beforeAll(async () => {
    certs = TlsCerts.generate();
    redis = await RedisServer.start({ password: PASSWORD, tls: certs });
    dataDir = mkdtempSync(join(tmpdir(), 'tls-svc-'));
  }, 30_000);
  afterAll(async () => {
    await redis?.stop();
    certs?.remove();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('the server is TLS-only: a plain redis:// client on its port gets no answer', async () => {
    expect(redis.url).toMatch(/^rediss:\/\/:tls-s3cret@127\.0\.0\.1:\d+$/);
    const plain = new Redis(redis.url.replace('rediss:', 'redis:'), {
      lazyConnect: true,
      connectTimeout: 1000,
      commandTimeout: 1000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    plain.on('error', () => undefined);
    try {
      await expect(plain.connect().then(() => plain.ping())).rejects.toThrow();
    } finally {
      plain.disconnect();
    }
  });

  it('with the CA trusted: kvstore connected, limits shared between the two processes, content served by both', async () => {
    const [a, b] = await ServiceProcess.startAll([
      { env: env(redis.url, join(dataDir, 'a'), certs.caFile) },
      { env: env(redis.url, join(dataDir, 'b'), certs.caFile) },
    ]);
    try {
      await sharesStateOverTls(a, b, {}, { id: 'tls-proof', title: 'Carried over TLS' });
    } finally {
      await a.stop();
      await b.stop();
    }
    // Stopped, so their output has been read to its end: no line of either holds the password.
    for (const p of [a, b]) expect(p.process.logs()).not.toContain(PASSWORD);
  }, 90_000);

  // Both faults: the service starts (ready 200), /health says degraded with the kvstore
  // disconnected, and limits fall back to memory per replica; the log says "unreachable" and names
  // the cause (WRONGPASS, or the certificate Node could not verify), never the password.
  it.each([
    [
      'a wrong password',
      () => env(redis.url.replace(`:${PASSWORD}@`, ':wrong-pw@'), join(dataDir, 'c'), certs.caFile),
      'wrong-pw',
      /WRONGPASS|invalid username-password/,
    ],
    ['an untrusted CA (no NODE_EXTRA_CA_CERTS)', () => env(redis.url, join(dataDir, 'd')), PASSWORD, /certificate/],
  ])(
    '%s: starts degraded, kvstore disconnected, limits in memory, the cause in the log, no password',
    async (_name, envOf, secret, cause) => {
      const svc = await ServiceProcess.start({ env: envOf() });
      try {
        expect((await svc.request('/health')).json()).toMatchObject({
          status: 'degraded',
          kvstore: 'disconnected',
          rate_limit_backend: 'memory',
          content: { store: 'kvstore' },
        });
        // The log reaches this process through a pipe and /health's answer through a socket: either
        // may be read first, so the line is awaited (a hang guard's timeout).
        const unreachable = await svc.logged('kvstore unreachable; falling back to in-memory state');
        expect(unreachable).toMatch(cause);
      } finally {
        await svc.stop();
      }
      // Stopped, so its output has been read to its end: no line holds the secret.
      expect(svc.process.logs()).not.toContain(secret);
    },
    60_000,
  );
});

describe('a TLS-only, password-protected three-master Redis Cluster (--tls-cluster yes) behind two real service processes', () => {
  let certs: TlsCerts;
  let cluster: RedisCluster;
  let dataDir: string;
  beforeAll(async () => {
    certs = TlsCerts.generate();
    cluster = await RedisCluster.start({ password: PASSWORD, tls: certs });
    dataDir = mkdtempSync(join(tmpdir(), 'tls-cluster-svc-'));
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    certs?.remove();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('KVSTORE_MODE=cluster with a rediss:// seed: connected, limits shared, content served by both', async () => {
    const clusterEnv = (dir: string) => ({
      ...env(cluster.url(0), join(dataDir, dir), certs.caFile),
      KVSTORE_MODE: 'cluster',
      KVSTORE_NODES: cluster.seeds.slice(1).join(','),
    });
    const [a, b] = await ServiceProcess.startAll([{ env: clusterEnv('a') }, { env: clusterEnv('b') }]);
    try {
      await sharesStateOverTls(
        a,
        b,
        { kvstore_mode: 'cluster' },
        { id: 'tls-cluster-proof', title: 'Carried over TLS to a cluster' },
      );
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 90_000);
});
