import type { Response } from 'express';
import { eventOrTimeout } from '../lib/event-or-timeout';
import { yieldToLoop } from '../lib/yield-to-loop';

/** How a streamed answer ended. */
export interface StreamResult {
  /**
   * `complete`: every chunk written and the answer ended; `client_gone`: the connection closed
   * first; `stalled`: the client read nothing for `stallMs`, and the connection was destroyed.
   */
  readonly outcome: 'complete' | 'client_gone' | 'stalled';
  /** Chunks written. */
  readonly chunks: number;
  /** UTF-16 code units written (characters, near enough; bytes would cost an encoding pass). */
  readonly chars: number;
}

/** Options of `writeChunks`. */
export interface WriteChunksOptions {
  /**
   * Longest run of chunks produced and written without handing the event loop back, ms. A client
   * that reads as fast as the service writes never makes `write` return false, so backpressure
   * alone would not yield. @default 10
   */
  readonly sliceMs?: number;
  /**
   * Longest wait for the socket to drain, ms: a client that stops reading for this long has its
   * connection destroyed, so it cannot hold a connection, its socket buffers and the producer
   * open forever. @default 60000
   */
  readonly stallMs?: number;
}

/** Resolves true on 'drain' or 'close', whichever comes first, false after `stallMs`; leaves no listener or timer behind. */
function drainedOrClosed(res: Response, stallMs: number): Promise<boolean> {
  return eventOrTimeout(res, ['drain', 'close'], [], stallMs);
}

/**
 * Writes `chunks` to `res` as they are produced, then ends it: the body is never held whole.
 *
 * - Backpressure: when `write` says the socket's buffer is full, waits for 'drain' before asking
 *   for the next chunk, so a slow client holds one chunk, not the export.
 * - Yields: hands the event loop back every `sliceMs` of work even when the client keeps up.
 * - A client that goes away (the connection closes) stops the production: nothing more is asked of
 *   `chunks`, and the outcome says so. One that stays connected but reads nothing for `stallMs`
 *   has its connection destroyed (outcome `stalled`).
 * - A chunk that cannot be produced (`chunks` throws): before anything was written the error is
 *   thrown, so the error handler answers a normal JSON 500. After the status line and some of the
 *   body went out, there is no honest way to say "failed" in HTTP/1.1, so the connection is
 *   destroyed: the client sees a transfer that ends without its last chunk (an aborted download,
 *   which every HTTP client reports as an error), never a truncated body passed off as complete.
 *   The error is thrown too, after the destroy, for the caller to log.
 */
export async function writeChunks(
  res: Response,
  chunks: Iterator<string>,
  opts: WriteChunksOptions = {},
): Promise<StreamResult> {
  const sliceMs = opts.sliceMs ?? 10;
  const stallMs = opts.stallMs ?? 60_000;
  let gone = false;
  const onClose = () => {
    gone = true;
  };
  res.on('close', onClose);
  let count = 0;
  let chars = 0;
  let sliceStart = performance.now();
  try {
    for (;;) {
      if (gone || res.destroyed) return { outcome: 'client_gone', chunks: count, chars };
      let next: IteratorResult<string>;
      try {
        next = chunks.next();
      } catch (err) {
        if (res.headersSent) res.destroy(err instanceof Error ? err : new Error(String(err)));
        throw err;
      }
      if (next.done) break;
      count++;
      chars += next.value.length;
      if (!res.write(next.value) && !(await drainedOrClosed(res, stallMs))) {
        res.destroy();
        return { outcome: 'stalled', chunks: count, chars };
      }
      // Checked after a drain too: a socket that takes each write at once (a client on loopback)
      // emits 'drain' on the next tick, so a wait for it is no turn of the event loop, and
      // restarting the slice there held the loop for a whole 7 MB answer (~40 ms, issue 37).
      if (performance.now() - sliceStart >= sliceMs) {
        await yieldToLoop();
        sliceStart = performance.now();
      }
    }
    if (gone || res.destroyed) return { outcome: 'client_gone', chunks: count, chars };
    res.end();
    return { outcome: 'complete', chunks: count, chars };
  } finally {
    res.off('close', onClose);
  }
}
