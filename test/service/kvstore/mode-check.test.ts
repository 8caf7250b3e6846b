import { parseSettings, type StoreTopologySettings } from '../../../configs';
import { KvstoreConnection } from '../../../service/kvstore/connection';
import { silentLogger } from '../../../service/lib/logger';
import { freePort } from '../../../tools/harness/ports';
import { RedisCluster } from '../../../tools/harness/redis-cluster';
import { RedisServer } from '../../../tools/harness/redis';
import { RedisSentinelSetup } from '../../../tools/harness/redis-sentinel';

const topology = (t: Partial<StoreTopologySettings>): StoreTopologySettings => ({
  mode: 'standalone',
  nodes: [],
  ...t,
});

async function connectAs(url: string, t: StoreTopologySettings, prefix: 'KVSTORE' | 'RATELIMIT_STORAGE' = 'KVSTORE') {
  const conn = new KvstoreConnection(url, parseSettings({ kvstore: { url } }), silentLogger(), undefined, {
    topology: t,
    variablePrefix: prefix,
  });
  try {
    await conn.connect();
    return conn.state;
  } finally {
    await conn.close();
  }
}

describe('the configured mode is checked against what the store answers (real redis-server)', () => {
  let server: RedisServer;
  let cluster: RedisCluster;
  let sentinels: RedisSentinelSetup;
  beforeAll(async () => {
    server = await RedisServer.start({ password: 's3cret' });
    cluster = await RedisCluster.start();
    sentinels = await RedisSentinelSetup.start();
  }, 90_000);
  afterAll(async () => {
    await sentinels?.stop();
    await cluster?.stop();
    await server?.stop();
  });

  it('a standalone setting pointed at a cluster node refuses to start, naming KVSTORE_MODE=cluster', async () => {
    await expect(connectAs(cluster.url(0), topology({}))).rejects.toMatchObject({
      code: 'ERR_KVSTORE_MODE_MISMATCH',
      message: expect.stringMatching(
        /KVSTORE_URL=redis:\/\/127\.0\.0\.1:\d+ answers as a Redis Cluster node \(redis_mode:cluster\) but KVSTORE_MODE=standalone; set KVSTORE_MODE=cluster/,
      ),
    });
  });

  it('a cluster setting pointed at a standalone server refuses to start (RATELIMIT_STORAGE_MODE for the limiter store), password masked', async () => {
    const err = await connectAs(server.url, topology({ mode: 'cluster' }), 'RATELIMIT_STORAGE').catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(
      /RATELIMIT_STORAGE_URL=redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ answers as a standalone Redis server .* but RATELIMIT_STORAGE_MODE=cluster; set RATELIMIT_STORAGE_MODE=standalone/,
    );
    expect((err as Error).message).not.toContain('s3cret');
  });

  it('a standalone setting pointed at a sentinel says to use sentinel mode and the master name', async () => {
    const url = `redis://${sentinels.sentinelAddresses[0]}`;
    await expect(connectAs(url, topology({}))).rejects.toThrow(
      /answers as a Redis Sentinel .* set KVSTORE_MODE=sentinel and KVSTORE_SENTINEL_MASTER/,
    );
  });

  it('matching modes connect: standalone, cluster and sentinel', async () => {
    expect(await connectAs(server.url, topology({}))).toBe('connected');
    expect(await connectAs(cluster.url(0), topology({ mode: 'cluster', nodes: cluster.seeds.slice(1) }))).toBe(
      'connected',
    );
    const url = `redis://${sentinels.sentinelAddresses[0]}`;
    expect(
      await connectAs(
        url,
        topology({
          mode: 'sentinel',
          nodes: sentinels.sentinelAddresses.slice(1),
          sentinelMaster: sentinels.masterName,
        }),
      ),
    ).toBe('connected');
  }, 30_000);

  it('an unreachable store cannot be checked: the service starts on its fallbacks, as before', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    expect(await connectAs(url, topology({ mode: 'cluster' }))).not.toBe('connected');
  });
});
