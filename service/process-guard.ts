import type { Logger } from 'pino';

/** The part of `process` the guard listens on; tests pass an EventEmitter. */
export interface ProcessEvents {
  on(event: 'uncaughtException', listener: (err: Error, origin: string) => void): unknown;
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  off(event: 'uncaughtException', listener: (err: Error, origin: string) => void): unknown;
  off(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
}

/** What the guard has seen; the count is also logged with each error. */
export interface ProcessGuard {
  /** Errors that escaped every handler since the guard was installed. */
  readonly escaped: number;
  /** Removes the listeners. */
  uninstall(): void;
}

/**
 * Keeps one request's escaped error from ending the process for everyone. Express already turns
 * a throwing or rejecting handler into that request's 500; what is left is an error thrown from
 * a callback or a stream event outside any request's chain (an unheard 'error' event, a rejected
 * promise nobody awaited). Such an error is logged at `error` with its stack and the process
 * keeps serving: the liveness probe, not a crash loop, decides whether the process is still
 * well, and every other in-flight request finishes.
 */
export function installProcessGuard(logger: Logger, proc: ProcessEvents = process): ProcessGuard {
  let escaped = 0;
  const onException = (err: Error, origin: string) => {
    escaped += 1;
    logger.error({ err, origin, escaped }, 'an error escaped every handler; the process keeps serving');
  };
  const onRejection = (reason: unknown) => {
    escaped += 1;
    logger.error(
      { err: reason, origin: 'unhandledRejection', escaped },
      'a promise rejection was not handled; the process keeps serving',
    );
  };
  proc.on('uncaughtException', onException);
  proc.on('unhandledRejection', onRejection);
  return {
    get escaped() {
      return escaped;
    },
    uninstall() {
      proc.off('uncaughtException', onException);
      proc.off('unhandledRejection', onRejection);
    },
  };
}
