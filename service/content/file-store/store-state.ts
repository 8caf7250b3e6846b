import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Item } from '../item';
import { packItem } from '../lazy-item';
import { generationFileName, type FileKind } from './generation-files';

/**
 * What the parts of a file store share (file-content-store.ts composes them): the folder, the
 * generation in use and its open log, the items loaded and written, and the error after which
 * writes are refused until restart.
 */
export class FileStoreState {
  /** Every item by id, packed; while `base` is set, only those loaded or written after the catalogue's. */
  items = new Map<string, Item>();
  /**
   * The items made from the catalogue at the start, in order, kept apart from `items` until a
   * compaction or a look-up by id needs one map of everything (`allItems`): a million ids entered
   * into a map cost most of a second, and a start needs only the list (`ordered`).
   */
  base: Item[] | undefined;
  /** Ids of `base` deleted since (a write or the log after the catalogue); each may be written again into `items`. */
  baseRemoved = new Set<string>();
  /** The generation in use: writes append to its log. */
  gen = 0;
  log: FileHandle | undefined;
  /** Bytes of the current log up to its last acknowledged write. */
  logBytes = 0;
  snapshotBytes = 0;
  /**
   * Items may be missing: the start found a snapshot missing or files damaged, or loaded a lossy
   * snapshot alone (`EndRecord.lossy`); snapshots are written lossy while it holds.
   */
  lossy = false;
  /** A write or compaction left the files so that writes must not go on: refused until restart. */
  broken: Error | undefined;

  constructor(
    /** Folder of the store (`DATA_DIR`). */
    readonly dir: string,
    readonly logger: Logger,
  ) {}

  /** Generation `gen`'s file of `kind`, in the folder. */
  path(gen: number, kind: FileKind): string {
    return join(this.dir, generationFileName(gen, kind));
  }

  /**
   * Enters a written or loaded item (added, or replacing the item of its id), packed (lazy-item.ts:
   * the content service's writes come packed, and it holds the very objects loaded from here).
   */
  put(item: Item): void {
    this.items.set(item.id, packItem(item));
  }

  /** Deletes `id` (nothing when it is not held). */
  remove(id: string): void {
    this.items.delete(id);
    if (this.base) this.baseRemoved.add(id);
  }

  /**
   * Every item in the store's order, as one map of them would list it: the catalogue's items with
   * later versions in their place (deleted ones left out), then the ids they do not hold, in the
   * order first written.
   */
  ordered(): Item[] {
    const { base, items, baseRemoved } = this;
    if (!base) return [...items.values()];
    if (items.size === 0 && baseRemoved.size === 0) return base.slice();
    const out: Item[] = [];
    const replaced = new Set<string>();
    for (let i = 0; i < base.length; i++) {
      const later = items.get(base[i].id);
      if (later !== undefined) {
        out.push(later);
        replaced.add(later.id);
      } else if (!baseRemoved.has(base[i].id)) out.push(base[i]);
    }
    for (const [id, item] of items) if (!replaced.has(id)) out.push(item);
    return out;
  }

  /** The map of every item (the catalogue's items entered into it now, once, if still apart). */
  allItems(): Map<string, Item> {
    const { base, baseRemoved } = this;
    if (base) {
      const all = new Map<string, Item>();
      for (const item of base) if (!baseRemoved.has(item.id)) all.set(item.id, item);
      for (const [id, item] of this.items) all.set(id, item);
      this.items = all;
      this.base = undefined;
      this.baseRemoved = new Set();
    }
    return this.items;
  }

  /** Makes renames and creations in the folder durable. */
  async syncDir(): Promise<void> {
    const dir = await open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}
