import { RedisServer } from '../../../tools/harness/redis';

describe('the RedisServer harness', () => {
  it('refuses a port another process holds instead of talking to that process', async () => {
    const holder = await RedisServer.start();
    try {
      await expect(RedisServer.start({ port: holder.port })).rejects.toThrow(/redis-server on port \d+ did not start/);
    } finally {
      await holder.stop();
    }
  });
});
