import { parseSettings } from '../../../configs';
import { kvstoreOptions, withoutPassword } from '../../../service/kvstore/connection';

describe('kvstore connection options', () => {
  it('KVSTORE_PASSWORD overrides a password in the URL (ioredis would let the URL win)', () => {
    expect(withoutPassword('redis://:inurl@kv:6379/2', 'fromsetting')).toBe('redis://kv:6379/2');
    expect(kvstoreOptions(parseSettings({ kvstore: { password: 'fromsetting' } })).password).toBe('fromsetting');
  });

  it('keeps the URL as given without KVSTORE_PASSWORD', () => {
    expect(withoutPassword('redis://:inurl@kv:6379/2', undefined)).toBe('redis://:inurl@kv:6379/2');
  });

  it('never queues commands while disconnected and never retries per request', () => {
    const o = kvstoreOptions(parseSettings({ kvstore: { commandTimeoutMs: 123 } }));
    expect(o).toMatchObject({ enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 123, lazyConnect: true });
  });
});
