/**
 * Child-process entry of the cluster-vs-standalone benchmark: `cluster-server-main.ts <standalone|cluster>
 * <redisUrl> [host:port,…]`. This service (`createApp`, full middleware stack) with its limiter on the
 * given store, limits far out of reach. Prints `LISTENING <port>`, stops on SIGTERM.
 */
import express from 'express';
import type { Server } from 'node:http';
import { parseSettings, type KvstoreMode } from '../../configs';
import { createApp } from '../../service/app';
import { closeDeps, createDeps, startDeps } from '../../service/deps';
import { silentLogger } from '../../service/lib/logger';
import { BENCH_PATH, HIGH } from './servers';

async function main(): Promise<void> {
  const [mode, url, nodes] = process.argv.slice(2);
  if ((mode !== 'standalone' && mode !== 'cluster') || !url)
    throw new Error('usage: cluster-server-main.ts <standalone|cluster> <redisUrl> [nodes]');
  const tier = { limit: HIGH.requests, windowSeconds: HIGH.windowSeconds, burst: HIGH.requests };
  const settings = parseSettings({
    service: { environment: 'production', logLevel: 'silent' },
    kvstore: { url, topology: { mode: mode as KvstoreMode, nodes: nodes ? nodes.split(',') : [] } },
    rateLimit: { tiers: { global: tier, ip: tier, search: tier } },
  });
  const router = express.Router();
  router.get(BENCH_PATH, (_req, res) => {
    res.json({ ok: true });
  });
  const deps = createDeps(settings, {
    logger: silentLogger(),
    features: {
      router,
      cache: { size: () => 0, maxSize: () => 0 },
      start: async () => undefined,
      close: async () => undefined,
    },
  });
  await startDeps(deps);
  if (deps.rateLimiter.backend() !== 'kvstore') throw new Error(`${mode}: the limiter is not on the kvstore`);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = createApp(deps).listen(0, '127.0.0.1');
    s.once('listening', () => resolve(s));
    s.once('error', reject);
  });
  const addr = server.address();
  process.stdout.write(`LISTENING ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => {
      void closeDeps(deps).finally(() => process.exit(0));
    });
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench server failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
