/**
 * Child-process entry of one benchmark contestant: `server-main.ts <kind> <redisUrl>`. Listens on a
 * free loopback port, prints `LISTENING <port>`, stops on SIGTERM.
 */
import type { Server } from 'node:http';
import { buildServer, SERVER_KINDS, type ServerKind } from './servers';

async function main(): Promise<void> {
  const [kind, redisUrl] = process.argv.slice(2);
  if (!SERVER_KINDS.includes(kind as ServerKind) || !redisUrl)
    throw new Error(`usage: server-main.ts <${SERVER_KINDS.join('|')}> <redisUrl>`);
  const built = await buildServer(kind as ServerKind, redisUrl);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = built.app.listen(0, '127.0.0.1');
    s.once('listening', () => resolve(s));
    s.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  const addr = server.address();
  process.stdout.write(`LISTENING ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => {
      void built.close().finally(() => process.exit(0));
    });
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench server failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
