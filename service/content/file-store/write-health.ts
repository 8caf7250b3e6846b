import { statfs } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock';
import { StoreUnavailableError, type WriteStatus } from '../content-store';
import { errorCode } from './error-code';

/** How often a store refusing writes for a full disk looks whether space has returned. */
export const SPACE_CHECK_MS = 5000;

/** Error codes of a file system with no room: the disk (`ENOSPC`) or the user's quota (`EDQUOT`). */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

/** Bytes free to this process in `dir`'s file system (`bavail × bsize`). */
export async function statfsFreeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/** What `WriteHealth` needs (the store's options, defaults applied). */
export interface WriteHealthOptions {
  /** Folder of the store (`DATA_DIR`). */
  readonly dir: string;
  readonly logger: Logger;
  readonly clock: Clock;
  /** While writes are refused for a full disk, how often free space is looked at. */
  readonly spaceCheckMs: number;
  /** Bytes free to this process in the folder's file system. */
  readonly freeBytes: (dir: string) => Promise<number>;
}

/**
 * How the file store's writes are doing, for `/health` and the write-state gauge: the last
 * failure while no success followed, the counts, and, while writes are refused for a full disk,
 * a watch on the free space that makes them `ok` again once the refused write would fit.
 */
export class WriteHealth {
  /** The last write's failure (its code) while it is not followed by a success. */
  private writeError: string | undefined;
  private writeFailures = 0;
  private lastWriteFailureAt: number | undefined;
  private lastWriteError: string | undefined;
  /** Bytes of the write refused for want of space: what must fit before it is worth trying again. */
  private refusedBytes = 0;
  private spaceTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: WriteHealthOptions) {}

  /** Records a refused write (health, the gauge, the log) and returns the error the client gets. */
  refused(e: unknown, bytes: number): StoreUnavailableError {
    const code = errorCode(e);
    this.writeError = code;
    this.lastWriteError = code;
    this.writeFailures++;
    this.lastWriteFailureAt = this.opts.clock.now();
    // The client learns what happened, not where: fs messages carry server paths (logged here).
    if (!NO_SPACE.has(code)) {
      this.opts.logger.error(
        { err: (e as Error).message, code, bytes },
        'content write to DATA_DIR failed; nothing was stored',
      );
      return new StoreUnavailableError(`could not write to the content store (DATA_DIR): ${code}; nothing was stored`);
    }
    this.refusedBytes = bytes;
    this.opts.logger.error(
      { err: (e as Error).message, code, bytes, dir: this.opts.dir },
      'content write refused: DATA_DIR has no space left (nothing was stored; the log is cut back to its last whole record). Writes succeed again once space is freed, without a restart',
    );
    this.watchForSpace();
    return new StoreUnavailableError(
      `could not write to the content store (DATA_DIR): the disk is full (${code}); nothing was stored. Writes succeed again once space is freed; retrying is safe`,
    );
  }

  /** Records a write that went through: writes are `ok` again after a failure. */
  succeeded(): void {
    if (this.writeError === undefined) return;
    this.opts.logger.info({ previousError: this.writeError }, 'content writes to DATA_DIR succeed again');
    this.writeError = undefined;
    this.stop();
  }

  /** While writes are refused for a full disk: `ok` again once the refused write would fit. */
  private watchForSpace(): void {
    if (this.spaceTimer) return;
    const free = this.opts.freeBytes;
    this.spaceTimer = setInterval(() => {
      free(this.opts.dir).then(
        (bytes) => {
          if (
            !this.spaceTimer ||
            this.writeError === undefined ||
            !NO_SPACE.has(this.writeError) ||
            bytes < this.refusedBytes
          )
            return;
          this.opts.logger.info(
            { freeBytes: bytes, refusedBytes: this.refusedBytes },
            'DATA_DIR has space again for the refused content write',
          );
          this.writeError = undefined;
          this.stop();
        },
        () => undefined,
      );
    }, this.opts.spaceCheckMs);
    this.spaceTimer.unref();
  }

  /** Stops watching the free space (a write went through, or the store closes). */
  stop(): void {
    clearInterval(this.spaceTimer);
    this.spaceTimer = undefined;
  }

  /** Whether writes go through now; `broken`: refused until restart (`read_only`). */
  status(broken: boolean): WriteStatus {
    const state = broken
      ? 'read_only'
      : this.writeError === undefined
        ? 'ok'
        : NO_SPACE.has(this.writeError)
          ? 'disk_full'
          : 'failing';
    return {
      state,
      failures: this.writeFailures,
      ...(this.lastWriteFailureAt !== undefined ? { lastFailureAt: this.lastWriteFailureAt } : {}),
      ...(this.lastWriteError !== undefined ? { lastError: this.lastWriteError } : {}),
    };
  }
}
