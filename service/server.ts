import type { Server } from 'node:http';
import type { Express } from 'express';
import { closeDeps, type AppDeps } from './deps';

/** A listening service and how to stop it. */
export interface RunningServer {
  readonly server: Server;
  readonly port: number;
  /** Graceful stop: readiness 503, no new connections, in-flight requests drain (bounded), deps close. */
  shutdown(): Promise<void>;
}

/** Listens on `port` (0 = any free port) on all interfaces, or on `host` when given. */
export async function listen(app: Express, deps: AppDeps, port: number, host?: string): Promise<RunningServer> {
  const server = await new Promise<Server>((resolve, reject) => {
    const s = host ? app.listen(port, host) : app.listen(port);
    s.once('listening', () => resolve(s));
    s.once('error', reject);
  });
  // Keep-alive sockets longer than a load balancer's idle timeout avoid spurious 502s.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const addr = server.address();
  const actualPort = typeof addr === 'object' && addr ? addr.port : port;
  let stopping: Promise<void> | undefined;
  const shutdown = () => {
    stopping ??= (async () => {
      deps.lifecycle.markDraining();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timeoutMs = deps.settings.service.shutdownTimeoutSeconds * 1000;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
        timer.unref();
      });
      await Promise.race([closed, timedOut]);
      if (timer) clearTimeout(timer);
      server.closeAllConnections();
      await closeDeps(deps);
    })();
    return stopping;
  };
  return { server, port: actualPort, shutdown };
}
