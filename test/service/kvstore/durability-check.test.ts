import { parseSettings, type KvstoreDurability } from '../../../configs';
import { durabilityProblem, KvstoreConnection } from '../../../service/kvstore/connection';
import { silentLogger } from '../../../service/lib/logger';
import { valkeyServer } from '../../../tools/harness/binary';
import { RedisServer } from '../../../tools/harness/redis';

const INFO_72_AOF = 'redis_version:7.2.4\r\nredis_mode:standalone\r\naof_enabled:1\r\n';

describe('durabilityProblem', () => {
  it('only the *-disk levels need WAITAOF (Redis 7.2+) and appendonly yes', () => {
    for (const level of ['primary', 'replica'] as const)
      expect(durabilityProblem(level, 'redis_version:6.2.0\r\naof_enabled:0', 'x')).toBeUndefined();
    for (const level of ['primary-disk', 'replica-disk'] as const) {
      expect(durabilityProblem(level, INFO_72_AOF, 'x')).toBeUndefined();
      expect(durabilityProblem(level, 'redis_version:8.0.1\r\naof_enabled:1', 'x')).toBeUndefined();
      expect(durabilityProblem(level, 'redis_version:7.0.15\r\naof_enabled:1', 'the kvstore primary')).toBe(
        `KVSTORE_DURABILITY=${level} needs WAITAOF (Redis 7.2 or later), but the kvstore primary runs Redis 7.0; accepted: primary or replica with this server, or Redis 7.2 or later with appendonly yes`,
      );
      expect(durabilityProblem(level, 'redis_version:7.2.0\r\naof_enabled:0', 'x')).toMatch(
        /needs an append-only file on the primary, but x has appendonly no/,
      );
    }
  });
});

describe('KVSTORE_DURABILITY is checked against the server at start (real redis-server)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start({ appendonly: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function connect(durability: KvstoreDurability | undefined) {
    const conn = new KvstoreConnection(
      server.url,
      parseSettings({ kvstore: { url: server.url, durability } }),
      silentLogger(),
    );
    try {
      await conn.connect();
      return { state: conn.state, durability: conn.durability };
    } finally {
      await conn.close();
    }
  }

  it('primary and replica connect; the mode default is primary for a standalone server', async () => {
    expect(await connect(undefined)).toEqual({ state: 'connected', durability: 'primary' });
    expect(await connect('replica')).toEqual({ state: 'connected', durability: 'replica' });
  });

  it('a *-disk level on a server without WAITAOF refuses to start, naming the variable, the version and what is accepted', async () => {
    const version = /redis_version:(\d+)\.(\d+)/.exec(
      await (async () => {
        const c = new (await import('ioredis')).default(server.url);
        try {
          return await c.info('server');
        } finally {
          c.disconnect();
        }
      })(),
    )!;
    const modern = Number(version[1]) > 7 || (Number(version[1]) === 7 && Number(version[2]) >= 2);
    if (modern) {
      // A server with WAITAOF and appendonly yes gives the level.
      expect(await connect('primary-disk')).toEqual({ state: 'connected', durability: 'primary-disk' });
      return;
    }
    await expect(connect('primary-disk')).rejects.toMatchObject({
      code: 'ERR_KVSTORE_DURABILITY',
      message: expect.stringMatching(
        /^KVSTORE_DURABILITY=primary-disk needs WAITAOF \(Redis 7\.2 or later\), but the kvstore primary runs Redis \d+\.\d+; accepted: primary or replica/,
      ),
    });
    await expect(connect('replica-disk')).rejects.toMatchObject({ code: 'ERR_KVSTORE_DURABILITY' });
  });
});

describe('KVSTORE_DURABILITY at start against a real Redis 7.2 (valkey 8.0 from bookworm-backports)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start({ binary: valkeyServer(), appendonly: true, appendfsync: 'everysec' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function connect(durability: KvstoreDurability) {
    const conn = new KvstoreConnection(
      server.url,
      parseSettings({ kvstore: { url: server.url, durability } }),
      silentLogger(),
    );
    try {
      await conn.connect();
      return conn.state;
    } finally {
      await conn.close();
    }
  }

  it('the *-disk levels start with appendonly yes, and refuse to start once it is off, naming what is missing', async () => {
    expect(await connect('primary-disk')).toBe('connected');
    expect(await connect('replica-disk')).toBe('connected');
    const admin = new (await import('ioredis')).default(server.url);
    try {
      await admin.config('SET', 'appendonly', 'no');
    } finally {
      admin.disconnect();
    }
    await expect(connect('primary-disk')).rejects.toMatchObject({
      code: 'ERR_KVSTORE_DURABILITY',
      message:
        'KVSTORE_DURABILITY=primary-disk needs an append-only file on the primary, but the kvstore primary has appendonly no (set appendonly yes in its redis.conf); accepted: primary or replica with this server, or Redis 7.2 or later with appendonly yes',
    });
  });
});
