import { open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { stepper } from '../../lib/yield-to-loop';
import { writeAll } from '../../lib/write-all';
import { GENERATION_FILE } from './generation-files';
import { itemsRecord, type EndRecord, type SnapshotRecord } from './log-records';
import { encodeRecord, encodeRecordInSteps } from './record-log';
import type { FileStoreState } from './store-state';

/** Items per record of a snapshot. */
const SNAPSHOT_CHUNK = 500;

/**
 * Compaction of the file store: a new generation (a snapshot of everything and an empty log)
 * that writes switch to, and the clean-up of the older ones. When it is due and what happens on
 * a failure (retries with backoff, health) is compaction-retries.ts.
 */
export class Compaction {
  /** Recovery at load wants a rewrite that has not happened yet (whatever the log's size). */
  rewriteWanted = false;
  /** Damaged files still to be renamed to `<file>.damaged` once a new generation is in use. */
  keepDamaged: string[] = [];
  /** A compaction switched generations but could not clean up after itself. */
  cleanupWanted = false;

  constructor(
    private readonly s: FileStoreState,
    /** Compact once the log is larger than this and than the last snapshot. */
    private readonly compactAfterBytes: number,
    /** Called after each compaction that switched generations (a new catalogue is written). */
    private readonly compacted: () => void,
  ) {}

  /** Whether a compaction is due: a rewrite is wanted, or the log outgrew its bound and the snapshot. */
  due(): boolean {
    return this.rewriteWanted || (this.s.logBytes > this.compactAfterBytes && this.s.logBytes > this.s.snapshotBytes);
  }

  /**
   * Writes generation g+1 (snapshot of everything, empty log), switches writes to it, then drops
   * every older generation: damaged files (`keepDamaged`) are renamed to `<file>.damaged`, the
   * rest deleted. Throws on failure, in three stages:
   * - before the switch (writing or renaming the snapshot): generation g stays in use; the new
   *   files are removed (a leftover `.tmp` is removed at the next start anyway);
   * - at the switch (creating the new log, syncing the folder): the new snapshot is removed again,
   *   because writes that go on into log g must not be shadowed at the next start by a snapshot
   *   that is older than them. If it cannot be removed, writes are refused (503, nothing stored)
   *   until restart, which loads both generations and keeps everything acknowledged;
   * - after the switch (renaming damaged files, deleting old ones; `cleanUp`): generation g+1
   *   is in use; older files left behind are merged at the next start (oldest first, newer
   *   content wins), and the retry only finishes the clean-up (no new generation).
   */
  async compact(): Promise<void> {
    const next = this.s.gen + 1;
    const snapshot = this.s.path(next, 'snapshot');
    const tmp = `${snapshot}.tmp`;
    const all = [...this.s.allItems().values()];
    let bytes = 0;
    try {
      const fh = await open(tmp, 'w');
      try {
        for (let i = 0; i < all.length; i += SNAPSHOT_CHUNK) {
          const step = stepper();
          const rec = await encodeRecordInSteps(
            { op: 'snapshot', ...(await itemsRecord(all.slice(i, i + SNAPSHOT_CHUNK), step)) } satisfies SnapshotRecord,
            step,
          );
          await writeAll(fh, rec);
          bytes += rec.length;
        }
        const end = encodeRecord({
          op: 'end',
          count: all.length,
          ...(this.s.lossy ? { lossy: true } : {}),
        } satisfies EndRecord);
        await writeAll(fh, end);
        bytes += end.length;
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, snapshot);
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw e;
    }
    let newLog: FileHandle | undefined;
    try {
      newLog = await open(this.s.path(next, 'log'), 'a');
      await this.s.syncDir();
    } catch (e) {
      await newLog?.close().catch(() => undefined);
      await this.dropGeneration(next, newLog !== undefined, e as Error);
      throw e;
    }
    const oldLog = this.s.log;
    this.s.log = newLog;
    this.s.gen = next;
    this.s.logBytes = 0;
    this.s.snapshotBytes = bytes;
    this.rewriteWanted = false;
    await oldLog?.close().catch(() => undefined);
    await this.cleanUp();
    this.s.logger.info({ generation: next, items: all.length, bytes }, 'content store compacted');
    this.compacted();
  }

  /**
   * Drops every generation older than the current one: damaged files (`keepDamaged`) are renamed
   * to `<file>.damaged`, the rest deleted. A damaged file whose rename fails is kept as it is
   * (never deleted) for the next attempt; the other files go regardless. Throws the first failure.
   */
  async cleanUp(): Promise<void> {
    let failed: unknown;
    const still: string[] = [];
    for (const file of this.keepDamaged) {
      try {
        await rename(file, `${file}.damaged`);
      } catch (e) {
        failed ??= e;
        still.push(file);
      }
    }
    this.keepDamaged = still;
    try {
      for (const n of await readdir(this.s.dir)) {
        const m = GENERATION_FILE.exec(n);
        const file = join(this.s.dir, n);
        if (m && Number(m[1]) < this.s.gen && !still.includes(file)) await rm(file, { force: true });
      }
      await this.s.syncDir();
    } catch (e) {
      failed ??= e;
    }
    this.cleanupWanted = failed !== undefined;
    if (failed !== undefined) throw failed;
  }

  /**
   * Removes generation `gen` (its snapshot, and its log when this attempt created it) after a
   * failed switch to it; refuses writes when it cannot.
   */
  private async dropGeneration(gen: number, createdLog: boolean, cause: Error): Promise<void> {
    try {
      await rm(this.s.path(gen, 'snapshot'), { force: true });
      if (createdLog) await rm(this.s.path(gen, 'log'), { force: true });
      await this.s.syncDir();
    } catch (e) {
      this.s.broken = cause;
      this.s.logger.error(
        { err: e, cause: cause.message, file: this.s.path(gen, 'snapshot') },
        'content store could not remove a half-made generation after a failed compaction; refusing writes until restart (a restart loads every generation and loses nothing acknowledged)',
      );
    }
  }
}
