import type { Request, Response } from 'express';

/** How much of an unwanted request body is read off before the connection is closed anyway. */
export interface DrainOptions {
  /** Most bytes discarded after the answer. @default 64 MiB */
  readonly maxBytes?: number;
  /** Longest time spent discarding, milliseconds. @default 10000 */
  readonly timeoutMs?: number;
}

/** Defaults of `DrainOptions`. */
export const DRAIN_DEFAULTS: Required<DrainOptions> = { maxBytes: 64 * 1024 * 1024, timeoutMs: 10_000 };

/**
 * Answers `status` with the JSON `body` to a request whose body is still arriving (an upload
 * refused for its size, say), without making the answer unreadable.
 *
 * Ending the response at once would make Node close the socket while the client is still
 * sending; the kernel then resets the connection, and a client that sends everything before
 * reading (Python requests, curl without `Expect`) gets EPIPE/ECONNRESET instead of the 413.
 * So the whole answer is written (with `Content-Length` and `Connection: close`), the rest of the
 * request body is read and discarded, and only then is the response ended and the connection
 * closed cleanly. Discarding is bounded (`maxBytes`, `timeoutMs`, and no attempt at all when a
 * declared `Content-Length` exceeds `maxBytes`); past a bound the connection is closed as before.
 */
export function answerThenDrain(
  req: Request,
  res: Response,
  status: number,
  body: unknown,
  opts: DrainOptions = {},
): void {
  const maxBytes = opts.maxBytes ?? DRAIN_DEFAULTS.maxBytes;
  const timeoutMs = opts.timeoutMs ?? DRAIN_DEFAULTS.timeoutMs;
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  res.status(status);
  res.set({
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(payload.length),
    Connection: 'close',
  });
  const declared = Number(req.get('content-length'));
  if (req.complete || req.readableEnded || (Number.isFinite(declared) && declared > maxBytes)) {
    res.end(payload);
    return;
  }
  res.write(payload);
  let discarded = 0;
  let done = false;
  const finish = (cut: boolean) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    req.off('data', count);
    req.off('end', onEnd);
    req.off('close', onClose);
    res.end();
    // Past a bound: close now; what the client still sends is refused by the kernel.
    if (cut) req.socket.destroy();
  };
  const count = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > maxBytes) finish(true);
  };
  const onEnd = () => finish(false);
  const onClose = () => finish(false);
  const timer = setTimeout(() => finish(true), timeoutMs);
  timer.unref();
  req.on('data', count);
  req.once('end', onEnd);
  req.once('close', onClose);
  req.resume();
}
