import Redis, { type RedisOptions } from 'ioredis';
import { RedisServer } from '../../tools/harness/redis';

/** A real redis-server and an ioredis client of it, for the tests of one describe block. */
export interface SuiteRedis {
  readonly server: RedisServer;
  readonly client: Redis;
}

/**
 * Starts a redis-server and a client of it (with `clientOptions`) before the tests of the
 * describe block it is called in, and stops both after them. Read `server` and `client` in hooks
 * and tests, not at the block's top level: they are there once the block's tests start.
 */
export function redisServerForSuite(clientOptions: RedisOptions = {}): SuiteRedis {
  const suite = {} as { server: RedisServer; client: Redis };
  beforeAll(async () => {
    suite.server = await RedisServer.start();
    suite.client = new Redis(suite.server.url, clientOptions);
  });
  afterAll(async () => {
    suite.client?.disconnect();
    await suite.server?.stop();
  });
  return suite;
}
