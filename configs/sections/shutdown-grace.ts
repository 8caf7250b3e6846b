/**
 * The time a replica gets after SIGTERM, shared by the chart (the pod's termination grace) and
 * the service (what it may still do before Kubernetes sends SIGKILL). The drain of in-flight
 * requests has `SHUTDOWN_TIMEOUT_SECONDS`; the grace adds `SHUTDOWN_GRACE_EXTRA_SECONDS` for what
 * follows the drain: persisting the search index's appended part (docs/search-segments.md,
 * "A graceful stop") and closing the stores, of which the last `SHUTDOWN_CLOSE_RESERVE_SECONDS`
 * are kept for closing the stores and exiting.
 */

/** Seconds of termination grace beyond `SHUTDOWN_TIMEOUT_SECONDS`. */
export const SHUTDOWN_GRACE_EXTRA_SECONDS = 10;
/** Of the grace, the last seconds kept for closing the content store and the kvstore connections and exiting. */
export const SHUTDOWN_CLOSE_RESERVE_SECONDS = 2;

/** The pod's termination grace, seconds, for a drain of `shutdownTimeoutSeconds`. */
export function terminationGraceSeconds(shutdownTimeoutSeconds: number): number {
  return shutdownTimeoutSeconds + SHUTDOWN_GRACE_EXTRA_SECONDS;
}

/**
 * Milliseconds after SIGTERM by which the search segment must be persisted: the termination
 * grace less the close reserve (18 s with the default 10 s drain). What the drain used is not
 * given again: a drain of its whole `SHUTDOWN_TIMEOUT_SECONDS` leaves 8 s.
 */
export function segmentPersistWindowMs(shutdownTimeoutSeconds: number): number {
  return (terminationGraceSeconds(shutdownTimeoutSeconds) - SHUTDOWN_CLOSE_RESERVE_SECONDS) * 1000;
}
