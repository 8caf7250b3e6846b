/**
 * Counts the Redis commands a contestant sends per request: every command MONITOR sees from a
 * client (those a Lua script runs are excluded) between a start and an end marker, divided by an
 * exact number of requests sent by a keep-alive client of our own (autocannon's `amount`
 * overshoots by a few with several connections). Two counts: requests one after another (what
 * each request costs alone: its round trips), and `loops` clients each sending `perLoop` requests
 * one after another at the same time (what the server sends under concurrency, where this service
 * batches a turn's decisions). Heartbeat PINGs (every contestant's connection sends them on its
 * own clock) are left out.
 */
import { Agent, get } from 'node:http';
import { clientCommandsDuring } from '../../tools/harness/redis-monitor';

export interface CommandCount {
  /** Requests sent. */
  readonly requests: number;
  /** Client commands per request. */
  readonly perRequest: number;
  /** Commands by name per request, e.g. `EVALSHA ×1`. */
  readonly commands: string;
}

/** One GET on a keep-alive agent; rejects unless it answers 200. */
function fetchOk(url: string, agent: Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${url}: HTTP ${res.statusCode}`))));
    }).on('error', reject);
  });
}

/**
 * Sends `loops × perLoop` requests (`loops` at a time) to `url` and counts the client commands Redis
 * saw meanwhile. The same requests are sent and watched once uncounted first, so that the sending
 * and watching code is warm and the connections open: otherwise the contestant counted first got
 * its concurrent requests from cold client code, one by one, and shared round trips 3-5 times less
 * than the same server counted later.
 */
export async function countCommands(
  redisUrl: string,
  url: string,
  loops: number,
  perLoop: number,
): Promise<CommandCount> {
  const agent = new Agent({ keepAlive: true, maxSockets: loops });
  const send = async () => {
    await Promise.all(
      Array.from({ length: loops }, async () => {
        for (let i = 0; i < perLoop; i++) await fetchOk(url, agent);
      }),
    );
  };
  try {
    // Requests of an earlier load may still be in flight for a moment: let them land before the warm-up pass.
    await new Promise((res) => setTimeout(res, 300));
    await clientCommandsDuring(redisUrl, send);
    const seen = await clientCommandsDuring(redisUrl, send);
    // Every contestant's connection sends a heartbeat PING now and then, whichever one is driven: not a request's round trip.
    const counted = seen.filter((name) => name !== 'PING');
    const requests = loops * perLoop;
    const byName = new Map<string, number>();
    for (const name of counted) byName.set(name, (byName.get(name) ?? 0) + 1);
    const commands = [...byName].map(([name, n]) => `${name} ×${+(n / requests).toFixed(3)}`).join(', ') || 'none';
    return { requests, perRequest: counted.length / requests, commands };
  } finally {
    agent.destroy();
  }
}
