import { keySlot } from '../../../service/kvstore/key-slot';

describe('keySlot', () => {
  it('matches CLUSTER KEYSLOT (values from the Redis Cluster specification and the cluster-key-slot package ioredis uses)', () => {
    expect(keySlot('123456789')).toBe(12739);
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    expect(keySlot('user1000')).toBe(3443);
    expect(keySlot('{svc-ai-search:content}:items')).toBe(8221);
    expect(keySlot('{svc-ai-search:content}:changes')).toBe(8221);
    // An empty first tag `{}` hashes the whole key (Redis's keyHashSlot).
    expect(keySlot('foo{}{bar}')).not.toBe(keySlot('bar'));
  });
});
