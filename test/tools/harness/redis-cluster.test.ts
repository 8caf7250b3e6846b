import { RedisCluster } from '../../../tools/harness/redis-cluster';

describe('the RedisCluster harness', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await RedisCluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('runs three masters that cover every slot and route keys between them', async () => {
    const c = cluster.client();
    try {
      await c.connect();
      const slots = (await c.cluster('SLOTS')) as unknown[];
      expect(slots).toHaveLength(3);
      // Keys on different slots land on different masters; the client follows MOVED.
      for (let i = 0; i < 20; i++) await c.set(`k${i}`, String(i));
      expect(await c.get('k7')).toBe('7');
    } finally {
      c.disconnect();
    }
  });

  it('a killed master comes back with its slots (empty) and the cluster is ok again', async () => {
    await cluster.kill(1);
    await cluster.restart(1);
    const n = cluster.nodeClient(1);
    try {
      await n.connect();
      expect(String(await n.call('CLUSTER', 'INFO'))).toMatch(/cluster_state:ok/);
      expect(String(await n.call('CLUSTER', 'MYID'))).toMatch(/^[0-9a-f]{40}$/);
    } finally {
      n.disconnect();
    }
  }, 60_000);
});
