import Redis from 'ioredis';

/**
 * The commands clients sent to the Redis at `redisUrl` while `fn` ran, upper-case names in the
 * order Redis ran them; those a Lua script runs are left out. MONITOR sees them between an ECHO
 * sent before `fn` and one sent after it has settled, on a connection of their own: by then every
 * command `fn` waited for has run, so the count holds those and nothing else.
 */
export async function clientCommandsDuring(redisUrl: string, fn: () => Promise<void>): Promise<string[]> {
  const monitor = new Redis(redisUrl);
  const marker = new Redis(redisUrl);
  try {
    const m = await monitor.monitor();
    const seen: string[] = [];
    m.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua') return;
      const name = String(args[0]).toUpperCase();
      seen.push(name === 'ECHO' ? `ECHO ${args[1]}` : name);
    });
    await marker.echo('start-of-count');
    await fn();
    await marker.echo('end-of-count');
    while (!seen.includes('ECHO end-of-count')) await new Promise((r) => setTimeout(r, 5));
    m.disconnect();
    return seen.slice(seen.indexOf('ECHO start-of-count') + 1, seen.indexOf('ECHO end-of-count'));
  } finally {
    monitor.disconnect();
    marker.disconnect();
  }
}
