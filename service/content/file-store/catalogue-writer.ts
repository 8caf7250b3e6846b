import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { STEP_BUDGET_MS, TimeSlicer, inSlices, yieldToLoop } from '../../lib/yield-to-loop';
import { readWholeFile } from '../../lib/read-whole-file';
import { writeAll } from '../../lib/write-all';
import { buildCatalogue, catalogueParts, type CatalogueSource } from './content-catalogue';
import { CATALOGUE_FILE } from './generation-files';
import type { FileStoreState } from './store-state';

/** A start that replayed more of the log than this after the catalogue writes a new catalogue. */
export const CATALOGUE_TAIL_BYTES = 1 << 20;

/**
 * When the file store writes its catalogue (content-catalogue.ts), in the background: after a
 * start that could not use one or replayed a long log after it, and after each compaction. One
 * at a time; a request meanwhile runs after it.
 */
export class CatalogueWriter {
  /** The catalogue being written, and whether another is wanted after it. */
  private job: Promise<void> | undefined;
  private again = false;
  private closing = false;

  constructor(
    private readonly s: FileStoreState,
    /** A start that replayed more of the log than this (or than an eighth of what the catalogue covers) writes a new one. */
    private readonly tailBytes: number,
  ) {}

  /**
   * After a start: a new catalogue when none was usable (`covered` undefined) or it was of the
   * older shape (`upgrade`), or when the log after it is long (for its size).
   */
  afterStart(covered: number | undefined, upgrade: boolean): void {
    const tail = covered === undefined || upgrade ? Infinity : this.s.logBytes - covered;
    if (tail > Math.min(this.tailBytes, (this.s.snapshotBytes + (covered ?? 0)) / 8)) this.save();
  }

  /**
   * Writes the catalogue of the current generation in the background (content-catalogue.ts): of
   * the items as they are now and the files up to the last acknowledged write, read back from
   * disk. Atomic (temp file, fsync, rename, folder fsync); one at a time, a request meanwhile
   * runs after it. A failure is logged and costs only the next start's speed.
   */
  save(): void {
    if (this.job) {
      this.again = true;
      return;
    }
    this.job = (async () => {
      do {
        this.again = false;
        await this.write();
      } while (this.again && !this.closing);
    })().finally(() => {
      this.job = undefined;
    });
  }

  /** Settles once the catalogue being written, if any, is written (tests, benchmarks). */
  async written(): Promise<void> {
    while (this.job) await this.job;
  }

  /** Writes no more catalogues (the store closes); the one being written, if any, is what it returns. */
  stop(): Promise<void> | undefined {
    this.closing = true;
    return this.job;
  }

  private async write(): Promise<void> {
    const file = join(this.s.dir, CATALOGUE_FILE);
    const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    const started = performance.now();
    try {
      await yieldToLoop();
      if (this.closing || this.s.broken) return;
      const gen = this.s.gen;
      const logBytes = this.s.logBytes;
      const items = this.s.ordered();
      const sources: CatalogueSource[] = [];
      try {
        sources.push({
          name: `content-${gen}.snapshot`,
          buf: await readWholeFile(this.s.path(gen, 'snapshot')),
          snapshot: true,
        });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || gen > 0) throw e;
      }
      const log = await readWholeFile(this.s.path(gen, 'log'));
      if (log.length < logBytes) throw new Error('the log is shorter than its acknowledged writes');
      sources.push({ name: `content-${gen}.log`, buf: log.subarray(0, logBytes), snapshot: false });
      const cat = await buildCatalogue(items, sources, yieldToLoop);
      if (!cat) {
        this.s.logger.warn(
          { file },
          'content catalogue not written: the content files do not hold the loaded items intact',
        );
        return;
      }
      if (this.closing || gen !== this.s.gen) return;
      const parts = await inSlices(catalogueParts(cat), new TimeSlicer(STEP_BUDGET_MS));
      if (this.closing || gen !== this.s.gen) return;
      const fh = await open(tmp, 'w');
      try {
        for (const p of parts) await writeAll(fh, p);
        await fh.sync();
      } finally {
        await fh.close();
      }
      if (this.closing || gen !== this.s.gen) {
        await rm(tmp, { force: true });
        return;
      }
      await rename(tmp, file);
      await this.s.syncDir();
      this.s.logger.info(
        { file, items: items.length, generation: gen, ms: Math.round(performance.now() - started) },
        'content catalogue written',
      );
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      this.s.logger.warn(
        { file, err: (e as Error).message },
        'content catalogue not written; the next start parses the content files',
      );
    }
  }
}
