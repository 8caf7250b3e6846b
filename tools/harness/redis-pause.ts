import type { RedisServer } from './redis';

/**
 * Freezes the server (SIGSTOP): connections stay open but nothing answers, as with a paused
 * container, DEBUG SLEEP or a stuck host. Always pair with `resumeRedis` in a `finally`.
 */
export function pauseRedis(redis: RedisServer): void {
  const pid = redis.process.pid;
  if (pid === undefined) throw new Error('redis-server is not running');
  process.kill(pid, 'SIGSTOP');
}

/** Lets a paused server run again (SIGCONT); it then runs what it was sent meanwhile. */
export function resumeRedis(redis: RedisServer): void {
  const pid = redis.process.pid;
  if (pid !== undefined) process.kill(pid, 'SIGCONT');
}
