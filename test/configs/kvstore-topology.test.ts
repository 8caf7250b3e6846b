import { loadSettings, redactSettings, SettingsError } from '../../configs';

function issuesOf(env: Record<string, string>): Array<{ code: string; variable: string; message: string }> {
  try {
    loadSettings(env);
  } catch (e) {
    if (e instanceof SettingsError)
      return e.issues.map((i) => ({ code: i.code, variable: i.variable, message: i.message }));
    throw e;
  }
  return [];
}

describe('kvstore topology settings (KVSTORE_MODE, KVSTORE_NODES, KVSTORE_SENTINEL_*)', () => {
  it('defaults to standalone with no extra nodes: today’s single Redis', () => {
    const s = loadSettings({ KVSTORE_URL: 'redis://kv:6379' });
    expect(s.kvstore.topology).toEqual({ mode: 'standalone', nodes: [] });
    expect(s.rateLimit.storageTopology).toEqual({ mode: 'standalone', nodes: [] });
  });

  it('accepts a cluster seed plus more seeds, and sentinels with a master name', () => {
    expect(
      loadSettings({ KVSTORE_URL: 'rediss://:pw@c1:6379', KVSTORE_MODE: 'cluster', KVSTORE_NODES: 'c2:6379, c3:6379' })
        .kvstore.topology,
    ).toEqual({
      mode: 'cluster',
      nodes: ['c2:6379', 'c3:6379'],
    });
    const s = loadSettings({
      KVSTORE_URL: 'redis://:pw@s1:26379',
      KVSTORE_MODE: 'sentinel',
      KVSTORE_SENTINEL_MASTER: 'mymaster',
    });
    expect(s.kvstore.topology).toMatchObject({ mode: 'sentinel', sentinelMaster: 'mymaster' });
  });

  it.each([
    [{ KVSTORE_MODE: 'cluster' }, 'KVSTORE_MODE', /KVSTORE_MODE=cluster needs KVSTORE_URL/],
    [
      { KVSTORE_URL: 'redis://a:1', KVSTORE_NODES: 'b:2' },
      'KVSTORE_NODES',
      /KVSTORE_NODES="b:2" is only used with KVSTORE_MODE=cluster .* or sentinel/,
    ],
    [
      { KVSTORE_URL: 'redis://a:1', KVSTORE_MODE: 'sentinel' },
      'KVSTORE_SENTINEL_MASTER',
      /KVSTORE_MODE=sentinel needs KVSTORE_SENTINEL_MASTER/,
    ],
    [
      { KVSTORE_URL: 'redis://a:1', KVSTORE_SENTINEL_MASTER: 'm' },
      'KVSTORE_SENTINEL_MASTER',
      /KVSTORE_SENTINEL_MASTER="m" is only used with KVSTORE_MODE=sentinel \(now standalone\)/,
    ],
    [
      { KVSTORE_URL: 'redis://a:1/3', KVSTORE_MODE: 'cluster' },
      'KVSTORE_URL',
      /selects database 3, but a Redis Cluster has database 0 only/,
    ],
    [
      { RATELIMIT_STORAGE_MODE: 'sentinel', RATELIMIT_STORAGE_SENTINEL_MASTER: 'm' },
      'RATELIMIT_STORAGE_MODE',
      /RATELIMIT_STORAGE_MODE=sentinel needs RATELIMIT_STORAGE_URL/,
    ],
  ])('refuses %j naming %s', (env, variable, message) => {
    const issues = issuesOf(env);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ code: 'ERR_SETTINGS_CONFLICT', variable });
    expect(issues[0].message).toMatch(message);
  });

  it.each([
    ['KVSTORE_MODE', 'replicated', 'one of standalone, cluster, sentinel'],
    ['KVSTORE_NODES', 'c2', 'host:port'],
    ['KVSTORE_NODES', 'c2:70000', 'port from 1 to 65535'],
    ['RATELIMIT_STORAGE_NODES', 'a:1,b', 'host:port'],
    ['KVSTORE_SENTINEL_MASTER', 'my master', 'letters, digits'],
  ])('%s=%j is refused with what is accepted', (name, value, accepted) => {
    const issues = issuesOf({ KVSTORE_URL: 'redis://a:1', KVSTORE_MODE: 'cluster', [name]: value });
    const mine = issues.find((i) => i.variable === name);
    expect(mine).toMatchObject({ code: 'ERR_SETTINGS_INVALID_VALUE' });
    expect(mine!.message).toContain(`${name}="${value}"`);
    expect(mine!.message).toContain(accepted);
  });

  it('sentinel passwords are secrets: hidden in errors and in logged settings', () => {
    const s = loadSettings({
      KVSTORE_URL: 'redis://s1:26379',
      KVSTORE_MODE: 'sentinel',
      KVSTORE_SENTINEL_MASTER: 'm',
      KVSTORE_SENTINEL_PASSWORD: 'hunter2',
    });
    expect(JSON.stringify(redactSettings(s))).not.toContain('hunter2');
    const issues = issuesOf({ KVSTORE_URL: 'redis://s1:26379', KVSTORE_SENTINEL_PASSWORD: 'hunter2' });
    expect(issues[0].message).toContain('KVSTORE_SENTINEL_PASSWORD=<hidden>');
    expect(JSON.stringify(issues)).not.toContain('hunter2');
  });
});
