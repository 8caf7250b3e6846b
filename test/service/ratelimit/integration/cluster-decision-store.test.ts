import { Cluster } from 'ioredis';
import { parseSettings } from '../../../../configs';
import { ClusterDecisionStore, clusterClientKey } from '../../../../service/ratelimit/cluster-decision-store';
import { TierResolver } from '../../../../service/ratelimit/tiers';
import { RedisCluster } from '../../../../tools/harness/redis-cluster';

describe('ClusterDecisionStore on a real three-master Redis Cluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  beforeAll(async () => {
    cluster = await RedisCluster.start();
    client = new Cluster(
      cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
      { enableAutoPipelining: true, lazyConnect: true },
    );
    await client.connect();
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });
  beforeEach(async () => {
    await cluster.flushAll();
  });

  const resolver = new TierResolver(
    parseSettings({
      service: { environment: 'production' },
      rateLimit: {
        tiers: {
          global: { limit: 100_000, windowSeconds: 60, burst: 100_000 },
          ip: { limit: 1, windowSeconds: 3600, burst: 3 },
        },
      },
    }).rateLimit,
  );
  const plan = resolver.plans.search;

  it('hash-tags a client’s keys on the client id, so its ip and endpoint tiers share a slot', async () => {
    const keys = plan.keys('2001:db8::/64').slice(1);
    const tagged = keys.map((k, i) => clusterClientKey(k, plan.tiers[i + 1].name));
    expect(tagged).toEqual(['ratelimit:ip:{2001:db8::/64}', 'ratelimit:search:{2001:db8::/64}']);
    const slots = await Promise.all(tagged.map((k) => client.call('CLUSTER', 'KEYSLOT', k)));
    expect(new Set(slots).size).toBe(1);
  });

  it('round trips per request: 2 one at a time; 1.01 to 1.03 for 100 clients at once; 0.02 for 100 requests of one client at once', async () => {
    const store = new ClusterDecisionStore(client);
    for (let i = 0; i < 10; i++) await store.decide(plan, plan.keys(`198.51.100.${i}`));
    expect(store.calls / 10).toBe(2);

    store.calls = 0;
    await Promise.all(Array.from({ length: 100 }, (_, i) => store.decide(plan, plan.keys(`203.0.113.${i}`))));
    // One client call per client (pipelined per node), then one global call per turn in which
    // client replies arrived: one per master at most.
    expect(store.calls).toBeGreaterThanOrEqual(101);
    expect(store.calls).toBeLessThanOrEqual(103);

    store.calls = 0;
    const same = await Promise.all(Array.from({ length: 100 }, () => store.decide(plan, plan.keys('192.0.2.7'))));
    // One client call for the turn; one global call for the 3 admitted; the other 97 refused by ip.
    expect(store.calls / 100).toBe(0.02);
    expect(same.filter((d) => d.allowed)).toHaveLength(3);
  });

  it('one client’s requests of two plans with as many client tiers, in one turn, are both answered', async () => {
    // search and chat (ip + endpoint), and base and unrouted (ip alone), each share a tier count
    // and the client's first key: their batches once shared an id and the earlier was dropped.
    const store = new ClusterDecisionStore(client);
    const { search, chat } = resolver.plans;
    const got = await Promise.all([
      store.decide(search, search.keys('192.0.2.8')),
      store.decide(chat, chat.keys('192.0.2.8')),
      store.decide(resolver.base, resolver.base.keys('192.0.2.9')),
      store.decide(resolver.unrouted, resolver.unrouted.keys('192.0.2.9')),
    ]);
    expect(got.map((d) => d.allowed)).toEqual([true, true, true, true]);
  });
});
