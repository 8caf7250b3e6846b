import {
  evictionProblem,
  infoField,
  KvstoreEvictionError,
  policyEffect,
} from '../../../service/kvstore/eviction-policy';

describe('policyEffect: what a maxmemory-policy does to keys without a TTL (the content keys)', () => {
  it('noeviction and every volatile-* policy keep them; every allkeys-* policy may evict them', () => {
    for (const p of ['noeviction', 'volatile-lru', 'volatile-lfu', 'volatile-random', 'volatile-ttl', 'NoEviction'])
      expect([p, policyEffect(p)]).toEqual([p, 'none']);
    for (const p of ['allkeys-lru', 'allkeys-lfu', 'allkeys-random'])
      expect([p, policyEffect(p)]).toEqual([p, 'evicts']);
  });

  it('a policy it does not know is read as evicting (the safe reading of a new name)', () => {
    expect(policyEffect('allkeys-something-new')).toBe('evicts');
    expect(policyEffect('lru')).toBe('evicts');
  });
});

describe('infoField', () => {
  const info =
    '# Memory\r\nused_memory:1048576\r\nmaxmemory:20971520\r\nmaxmemory_human:20.00M\r\nmaxmemory_policy:allkeys-lru\r\n';
  it('reads one field of an INFO reply (CRLF lines), undefined when absent', () => {
    expect(infoField(info, 'maxmemory_policy')).toBe('allkeys-lru');
    expect(infoField(info, 'maxmemory')).toBe('20971520');
    expect(infoField(info, 'evicted_keys')).toBeUndefined();
  });
});

describe('evictionProblem: the startup error names the setting, its value, where it was read and the fixes', () => {
  it('for a policy read by CONFIG GET', () => {
    const m = evictionProblem({
      policy: 'allkeys-lru',
      maxmemory: 20 * 1024 * 1024,
      source: 'config',
      where: 'the server',
    });
    expect(m).toMatch(
      /^the kvstore's maxmemory-policy is allkeys-lru \(maxmemory 20mb, read from the server by CONFIG GET\): /,
    );
    expect(m).toContain('Accepted: maxmemory-policy noeviction');
    expect(m).toContain('a volatile-* policy (only keys with a TTL are evicted: the content keys have none)');
    expect(m).toContain('set KVSTORE_ACCEPT_EVICTION=true to start anyway');
  });

  it('for a policy read by INFO memory on a cluster master, without a limit yet', () => {
    const m = evictionProblem({
      policy: 'allkeys-lfu',
      maxmemory: 0,
      source: 'info',
      where: 'the cluster master 10.0.0.5:6379',
    });
    expect(m).toContain(
      'maxmemory-policy is allkeys-lfu (maxmemory 0 (no limit yet: one set later with CONFIG SET applies this policy at once), read from the cluster master 10.0.0.5:6379 by INFO memory)',
    );
  });

  it('is raised as KvstoreEvictionError with a stable code', () => {
    expect(new KvstoreEvictionError('x')).toMatchObject({
      code: 'ERR_KVSTORE_EVICTION',
      name: 'KvstoreEvictionError',
      message: 'x',
    });
  });
});
