import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1, found by binding port 0 and releasing it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
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
