import Redis from 'ioredis';
import { parseSettings } from '../../../configs';
import { KvstoreConnection, type KvstoreConnectionOptions } from '../../../service/kvstore/connection';
import { KvstoreEvictionError } from '../../../service/kvstore/eviction-policy';
import { silentLogger } from '../../../service/lib/logger';
import { waitFor } from '../../../tools/harness/ports';
import { RedisCluster } from '../../../tools/harness/redis-cluster';
import { RedisServer } from '../../../tools/harness/redis';

/** The eviction watch of a kvstore connection against a real redis-server with a 2 MB ceiling. */
describe('the kvstore eviction watch (real redis-server, maxmemory 2mb)', () => {
  let redis: RedisServer;
  let admin: Redis;
  beforeAll(async () => {
    redis = await RedisServer.start({ args: ['--maxmemory', '2mb', '--maxmemory-policy', 'noeviction'] });
    admin = new Redis(redis.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await redis?.stop();
  });
  beforeEach(async () => {
    await admin.flushall();
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('RESETSTAT');
  });

  const open = (accept: boolean, options: KvstoreConnectionOptions = {}) =>
    new KvstoreConnection(
      redis.url,
      parseSettings({ kvstore: { url: redis.url, acceptEviction: accept } }),
      silentLogger(),
      undefined,
      options,
    );

  /** Writes 4 MB in 64 KB keys (with a TTL when `ttl`): with an evicting policy Redis evicts; with noeviction the writes are refused. */
  async function overfill(prefix: string, ttl = false): Promise<void> {
    const value = Buffer.alloc(64 * 1024, 'x');
    for (let i = 0; i < 64; i++)
      await (ttl ? admin.set(`${prefix}:${i}`, value, 'PX', 600_000) : admin.set(`${prefix}:${i}`, value)).catch(
        () => undefined,
      );
  }

  const serverEvictions = async () => Number(/evicted_keys:(\d+)/.exec(await admin.info('stats'))![1]);

  it('content and allkeys-lru: connect rejects with ERR_KVSTORE_EVICTION; accepted, it connects and says so', async () => {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const refused = open(false);
    try {
      const err = await refused.connect().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(KvstoreEvictionError);
      expect(err).toMatchObject({
        code: 'ERR_KVSTORE_EVICTION',
        message: expect.stringContaining('maxmemory-policy is allkeys-lru (maxmemory 2mb'),
      });
    } finally {
      await refused.close();
    }
    const accepted = open(true);
    try {
      await accepted.connect();
      expect(accepted.eviction.status).toEqual({
        policy: 'allkeys-lru',
        maxmemory_bytes: 2 * 1024 * 1024,
        policy_risk: 'accepted',
        evicted_keys: 0,
        last_eviction_at: null,
      });
      expect(accepted.eviction.degraded).toBe(false);
      expect(accepted.eviction.refusesWrites).toBe(false);
    } finally {
      await accepted.close();
    }
  });

  it('counts the rise of evicted_keys, emits it, degrades for the hold, and counts a restarted server from zero', async () => {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const conn = open(true, { evictionCheckMs: 50, evictionHoldMs: 1000 });
    const emitted: number[] = [];
    conn.eviction.on('evicted', (n: number) => emitted.push(n));
    try {
      await conn.connect();
      await overfill('a');
      expect(await serverEvictions()).toBeGreaterThan(0);
      // The server's count read at each check: it may evict a key or two more after the fill
      // returns (seen with one core busy: 116 read, then 117).
      const first = await waitFor(
        'the evictions counted',
        async () => {
          const server = await serverEvictions();
          return conn.eviction.evictedKeys === server && server;
        },
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      expect(emitted.reduce((a, b) => a + b, 0)).toBe(first);
      expect(conn.eviction.degraded).toBe(true);
      // A restarted server (no persistence: empty, its count at 0, another run_id) counts anew,
      // even when it evicts more than the old one had before the next poll.
      await redis.kill();
      await redis.restart();
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      await overfill('b');
      await overfill('b2');
      expect(await serverEvictions()).toBeGreaterThan(0);
      await waitFor(
        'the evictions after the reset counted',
        async () => conn.eviction.evictedKeys === first + (await serverEvictions()),
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      // Degraded until `evictionHoldMs` after the last eviction seen, then not (nothing evicts now).
      await waitFor('health back after the hold', () => !conn.eviction.degraded, { timeoutMs: 10_000, intervalMs: 50 });
      expect(conn.eviction.status.last_eviction_at).not.toBeNull();
    } finally {
      await conn.close();
    }
  });

  it('volatile-lru: keys with a TTL evicted are counted, but content is not at risk: no reload asked, health not degraded', async () => {
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
    const conn = open(false, { evictionCheckMs: 50 });
    const emitted: Array<[number, boolean]> = [];
    conn.eviction.on('evicted', (n: number, atRisk: boolean) => emitted.push([n, atRisk]));
    try {
      await conn.connect();
      expect(conn.eviction.risk).toBe('none');
      await overfill('ttl', true);
      const n = await serverEvictions();
      expect(n).toBeGreaterThan(0);
      await waitFor('the evictions counted', () => conn.eviction.evictedKeys === n, {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      expect(emitted.every(([, atRisk]) => !atRisk)).toBe(true);
      expect(conn.eviction.contentAtRisk).toBe(false);
      expect(conn.eviction.degraded).toBe(false);
    } finally {
      await conn.close();
    }
  });

  it("the rate limiter's own store: an evicting policy and evictions are reported, never a refusal or degraded health", async () => {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const conn = open(false, { holdsContent: false, evictionCheckMs: 50 });
    try {
      await conn.connect();
      expect(conn.eviction.risk).toBe('evicts');
      await overfill('c');
      const n = await serverEvictions();
      await waitFor('the evictions counted', () => conn.eviction.evictedKeys === n, {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      expect(conn.eviction.degraded).toBe(false);
      expect(conn.eviction.refusesWrites).toBe(false);
    } finally {
      await conn.close();
    }
  });

  it('a reconnect reads the policy again: changed to allkeys-lru, content writes are refused and health degraded', async () => {
    // No poll within the test: only the reconnect can see the change.
    const conn = open(false, { evictionCheckMs: 600_000 });
    try {
      await conn.connect();
      expect(conn.eviction.risk).toBe('none');
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      await waitFor('the policy read again after the reconnect', () => conn.eviction.risk === 'evicts', {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      expect(conn.eviction.refusesWrites).toBe(true);
      expect(conn.eviction.degraded).toBe(true);
      expect(conn.eviction.refusal).toContain('maxmemory-policy is allkeys-lru');
    } finally {
      await conn.close();
    }
  });
});

describe('the eviction check on a Redis Cluster (real redis-server nodes)', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await RedisCluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('one master with allkeys-lru refuses the start, naming that master; all noeviction connects', async () => {
    const settings = parseSettings({
      kvstore: { url: cluster.url(0), topology: { mode: 'cluster', nodes: cluster.seeds } },
    });
    const check = async () => {
      const conn = new KvstoreConnection(cluster.url(0), settings, silentLogger());
      try {
        await conn.connect();
        return conn.eviction.status;
      } finally {
        await conn.close();
      }
    };
    expect(await check()).toMatchObject({ policy: 'noeviction', policy_risk: 'none' });
    const port = cluster.nodes[1].port;
    const node = new Redis(port, '127.0.0.1');
    try {
      await node.config('SET', 'maxmemory-policy', 'allkeys-lru');
      await expect(check()).rejects.toMatchObject({
        code: 'ERR_KVSTORE_EVICTION',
        message: expect.stringContaining(
          `maxmemory-policy is allkeys-lru (maxmemory 0 (no limit yet: one set later with CONFIG SET applies this policy at once), read from the cluster master 127.0.0.1:${port} by CONFIG GET)`,
        ),
      });
    } finally {
      await node.config('SET', 'maxmemory-policy', 'noeviction');
      node.disconnect();
    }
  }, 60_000);
});
