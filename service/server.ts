import { createServer, maxHeaderSize, type Server } from 'node:http';
import type { Express } from 'express';
import { closeDeps, type AppDeps } from './deps';
import { answerClientErrors } from './http/client-errors';

/** A listening service and how to stop it. */
export interface RunningServer {
  readonly server: Server;
  readonly port: number;
  /**
   * Graceful stop: readiness 503, no new connections, in-flight requests drain (bounded), deps
   * close (the search segment is persisted first, within the termination grace: `Features.close`).
   */
  shutdown(): Promise<void>;
}

/**
 * Listens on `port` (0 = any free port) on all interfaces, or on `host` when given. The
 * request, headers and keep-alive timeouts come from the settings (`REQUEST_TIMEOUT_MS`,
 * `HEADERS_TIMEOUT_MS`, `KEEP_ALIVE_TIMEOUT_MS`): a client that trickles its request gets 408
 * and its connection closed, instead of holding it for Node's default five minutes. The refusals
 * Node makes before a route runs (408, 431 for headers over Node's limit, 400 for malformed HTTP)
 * carry our JSON error shape (http/client-errors.ts), not Node's bare status line.
 */
export async function listen(app: Express, deps: AppDeps, port: number, host?: string): Promise<RunningServer> {
  const { requestTimeoutMs, headersTimeoutMs, keepAliveTimeoutMs } = deps.settings.service;
  const server = createServer(
    {
      requestTimeout: requestTimeoutMs,
      headersTimeout: headersTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      // Node checks the request and headers timeouts on this period (30 s by default), so a
      // timeout would fire up to one period late.
      connectionsCheckingInterval: Math.min(1000, headersTimeoutMs),
    },
    app,
  );
  answerClientErrors(server, { requestTimeoutMs, headersTimeoutMs, maxHeaderSize });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => {
      server.off('error', reject);
      resolve();
    });
    server.once('error', reject);
    if (host) server.listen(port, host);
    else server.listen(port);
  });
  const addr = server.address();
  const actualPort = typeof addr === 'object' && addr ? addr.port : port;
  let stopping: Promise<void> | undefined;
  const shutdown = () => {
    stopping ??= (async () => {
      deps.lifecycle.markDraining(deps.clock.now());
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
