import { parseSettings } from '../../../configs';
import { KvstoreConnection, kvstoreOptions, withoutPassword } from '../../../service/kvstore/connection';
import { silentLogger } from '../../../service/lib/logger';
import { RedisServer } from '../../../tools/harness/redis';
import { freePort, waitFor } from '../../../tools/harness/ports';
import { capture } from '../../helpers/log-capture';
import { pauseRedis, resumeRedis } from '../../../tools/harness/redis-pause';

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
    expect(o).toMatchObject({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 123,
      lazyConnect: true,
    });
  });
});

describe('kvstore connection to a closed port', () => {
  it('logs each reconnection attempt at debug, numbered, with its delay (what a test of a store that stays away waits on)', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const { logger, lines } = capture('debug');
    const conn = new KvstoreConnection(url, parseSettings({ kvstore: { url } }), logger);
    try {
      await conn.connect();
      expect(conn.state).toBe('disconnected');
      const attempts = () => lines.filter((l) => l.msg === 'kvstore reconnecting');
      await waitFor('two reconnection attempts', () => attempts().length >= 2, { timeoutMs: 10_000, intervalMs: 20 });
      expect(attempts().slice(0, 2)).toMatchObject([
        { level: 20, attempt: 1, delay_ms: expect.any(Number) },
        { level: 20, attempt: 2, delay_ms: expect.any(Number) },
      ]);
    } finally {
      await conn.close();
    }
  });
});

describe('kvstore connection state against a real Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('a paused server (SIGSTOP) is unresponsive and down; answering again makes it connected and up', async () => {
    const events: string[] = [];
    const settings = parseSettings({ kvstore: { url: redis.url, commandTimeoutMs: 300 } });
    const conn = new KvstoreConnection(redis.url, settings, silentLogger(), undefined, { heartbeatMs: 100 });
    conn.on('up', () => events.push('up'));
    conn.on('down', () => events.push('down'));
    await conn.connect();
    try {
      expect(conn.state).toBe('connected');
      expect(conn.degraded).toBe(false);
      pauseRedis(redis);
      try {
        await waitFor('the unresponsive state', () => conn.state === 'unresponsive', {
          timeoutMs: 10_000,
          intervalMs: 20,
        });
        expect(conn.available).toBe(false);
        expect(conn.degraded).toBe(true);
      } finally {
        resumeRedis(redis);
      }
      await waitFor('the connected state', () => conn.state === 'connected', { timeoutMs: 10_000, intervalMs: 20 });
      expect(events).toEqual(['up', 'down', 'up']);
    } finally {
      await conn.close();
    }
  }, 30_000);

  it('a command timeout reported by a user makes it unresponsive at once; a refusal makes it degraded, still usable', async () => {
    const settings = parseSettings({ kvstore: { url: redis.url } });
    const conn = new KvstoreConnection(redis.url, settings, silentLogger(), undefined, { heartbeatMs: 60_000 });
    const events: string[] = [];
    conn.on('down', () => events.push('down'));
    await conn.connect();
    try {
      conn.commandFailed(new Error("CROSSSLOT Keys in request don't hash to the same slot"));
      expect(conn.state).toBe('degraded');
      expect(conn.degraded).toBe(true);
      // Commands are still sent (they are the only way to find the store working again), and
      // nothing falls back for a refusal alone.
      expect(conn.available).toBe(true);
      expect(events).toEqual([]);
      conn.commandFailed(new Error('Command timed out'));
      expect(conn.state).toBe('unresponsive');
    } finally {
      await conn.close();
    }
  });

  it('degraded turns back into connected once no failure has been reported for degradedHoldMs', async () => {
    const settings = parseSettings({ kvstore: { url: redis.url } });
    const conn = new KvstoreConnection(redis.url, settings, silentLogger(), undefined, {
      heartbeatMs: 50,
      degradedHoldMs: 200,
    });
    await conn.connect();
    try {
      conn.commandFailed(new Error('NOSCRIPT No matching script'));
      expect(conn.state).toBe('degraded');
      await waitFor('connected again', () => conn.state === 'connected', { timeoutMs: 10_000, intervalMs: 20 });
    } finally {
      await conn.close();
    }
  });
});
