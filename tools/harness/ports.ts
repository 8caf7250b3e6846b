import { createServer } from 'node:net';

/**
 * Ports below Linux's ephemeral range (32768–60999 by default), split into one block per jest
 * worker: the port a test hands a child process (redis-server, Prometheus, the service) is then
 * never the one the kernel just gave another worker's binary, nor the source port of an outgoing
 * connection, in the moment between finding it free and the child binding it.
 */
const WORKER_PORTS = { first: 12_000, perWorker: 2_000, workers: 10 } as const;
let nextInBlock = -1;

/** Binds `port` on 127.0.0.1 (0: any) and releases it; the port bound, or undefined when taken. */
function bindAndRelease(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      const bound = typeof addr === 'object' && addr ? addr.port : undefined;
      srv.close(() => resolve(bound));
    });
  });
}

/**
 * A free TCP port on 127.0.0.1. Under jest, one of this worker's block (above), tried in turn from
 * a random start; elsewhere, what binding port 0 gives.
 */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.JEST_WORKER_ID);
  if (Number.isInteger(worker) && worker >= 1) {
    const base = WORKER_PORTS.first + ((worker - 1) % WORKER_PORTS.workers) * WORKER_PORTS.perWorker;
    if (nextInBlock < 0) nextInBlock = Math.floor(Math.random() * WORKER_PORTS.perWorker);
    for (let tried = 0; tried < WORKER_PORTS.perWorker; tried++) {
      const port = base + (nextInBlock++ % WORKER_PORTS.perWorker);
      if ((await bindAndRelease(port)) !== undefined) return port;
    }
  }
  const port = await bindAndRelease(0);
  if (port === undefined) throw new Error('no free port on 127.0.0.1');
  return port;
}

/** Resolves once something accepts TCP connections on 127.0.0.1:port, or rejects after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs = 15000): Promise<void> {
  const { connect } = await import('node:net');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listening on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** True when nothing listens on 127.0.0.1:port right now (so it can be bound). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** `preferred` when it is free on 127.0.0.1 (a person's usual port), else any free port. */
export async function preferredPort(preferred: number | undefined): Promise<number> {
  if (preferred !== undefined && (await portIsFree(preferred))) return preferred;
  return freePort();
}

/** Options of `waitFor`. */
export interface WaitForOptions {
  /** Give up after this long. @default 15000 */
  readonly timeoutMs?: number;
  /** Pause between attempts. @default 100 */
  readonly intervalMs?: number;
}

/**
 * Polls `check` until it returns something other than `undefined` or `false` and resolves with
 * that. A throwing check counts as "not yet". On timeout the error names `what` and the last
 * value or error seen, so a failing test says what it was waiting for and what it saw instead.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  opts: WaitForOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 15000;
  const intervalMs = opts.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let last = 'nothing yet';
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
      last = `got ${JSON.stringify(v)}`;
    } catch (e) {
      last = `error: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
