import { parseSettings } from '../../../configs';
import { RedisSentinelSetup } from '../../../tools/harness/redis-sentinel';

describe('the RedisSentinelSetup harness', () => {
  let setup: RedisSentinelSetup;
  beforeAll(async () => {
    setup = await RedisSentinelSetup.start({ password: 'sentinel-test-pass' });
  }, 60_000);
  afterAll(async () => {
    await setup?.stop();
  });

  it('gives the kvstore settings of the service: the first sentinel with the password in the URL, the others as nodes', () => {
    const { kvstore } = parseSettings({ kvstore: setup.kvstoreSettings() });
    expect(kvstore.url).toBe(`redis://:sentinel-test-pass@${setup.sentinelAddresses[0]}`);
    expect(kvstore.topology).toMatchObject({
      mode: 'sentinel',
      nodes: setup.sentinelAddresses.slice(1),
      sentinelMaster: 'mymaster',
    });
    expect(kvstore.connectTimeoutMs).toBe(3000);
  });

  it('kills the master; the sentinels promote the replica, which keeps what was replicated', async () => {
    const first = await setup.currentMaster();
    expect(first).toBe(setup.data[0]);
    const c = setup.client();
    await c.connect();
    try {
      await c.set('before-failover', 'kept');
      // Acknowledged by the replica before the kill: only then is it promised to survive.
      expect(await c.wait(1, 5000)).toBe(1);
      const promoted = await setup.failover();
      expect(promoted).toBe(setup.data[1]);
      const n = setup.dataClient(promoted.port);
      try {
        await n.connect();
        expect(await n.get('before-failover')).toBe('kept');
      } finally {
        n.disconnect();
      }
    } finally {
      await c.quit();
    }
  }, 60_000);
});
