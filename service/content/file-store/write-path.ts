import type { FileHandle } from 'node:fs/promises';
import { stepper } from '../../lib/yield-to-loop';
import { writeAll } from '../../lib/write-all';
import { StoreUnavailableError } from '../content-store';
import type { Item } from '../item';
import { errorCode } from './error-code';
import { itemsRecord, type PutRecord } from './log-records';
import { encodeRecordInSteps } from './record-log';
import type { FileStoreState } from './store-state';
import type { WriteHealth } from './write-health';

/**
 * Appends a write (its items and the ids it deletes) to the current log as one record and
 * `fdatasync`s it, then enters it: all or nothing, deletes as durable as puts. A failed append is cut off the log again (or, when it cannot be, writes are
 * refused until restart) and throws the error the client gets (`WriteHealth.refused`). Runs in
 * the store's queue, one writer at a time.
 */
export async function appendBatch(
  s: FileStoreState,
  health: WriteHealth,
  items: readonly Item[],
  removed: readonly string[] = [],
): Promise<void> {
  if (s.broken)
    throw new StoreUnavailableError(
      `content store is read-only after a write error (${errorCode(s.broken)}); nothing was stored`,
    );
  const log = s.log;
  if (!log) throw new StoreUnavailableError('content store is not open');
  const step = stepper();
  const record = await encodeRecordInSteps(
    {
      op: 'put',
      ...(removed.length ? { removed: [...removed] } : {}),
      ...(await itemsRecord(items, step)),
    } satisfies PutRecord,
    step,
  );
  try {
    // Every byte or an error: a disk that fills mid-append returns a short count, and a
    // record acknowledged on that count would be cut off as a torn tail at the next start.
    await writeAll(log, record);
    await log.datasync();
  } catch (e) {
    await undoAppend(s, log, e as Error);
    throw health.refused(e, record.length);
  }
  s.logBytes += record.length;
  health.succeeded();
  // In steps too: the writes queue behind this one until all are in.
  for (const id of removed) {
    s.remove(id);
    await step();
  }
  for (const i of items) {
    s.put(i);
    await step();
  }
}

/** A failed append may have left part of a record; cut it so later appends stay readable. */
async function undoAppend(s: FileStoreState, log: FileHandle, cause: Error): Promise<void> {
  try {
    await log.truncate(s.logBytes);
    await log.sync();
  } catch (e) {
    s.broken = cause;
    s.logger.error(
      { err: e, cause: cause.message },
      'content log could not be repaired; refusing writes until restart',
    );
  }
}
