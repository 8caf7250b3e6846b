import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { compareNewestFirst, sameContent, stamp, type Item, type ItemChange, type ItemInput, type ItemType } from './item';
import { plainTextOf } from './plain-text';
import { StoreUnavailableError, type ContentStore } from './store';

/** What changed in the catalog: some items upserted, or everything replaced (`reset`). */
export interface ContentChange {
  readonly upserted: readonly Item[];
  /** True when the catalog was replaced whole; `all` then holds every item. */
  readonly reset: boolean;
  readonly all?: readonly Item[];
}

/** Told of every change before the write that caused it resolves (so content is searchable at once). */
export type ContentListener = (change: ContentChange) => Promise<void>;

/** Times the shared store was found to have lost items this replica held, and how many items in all. */
export interface StoreLosses {
  readonly events: number;
  readonly items: number;
}

/** A page of a listing. */
export interface ListPage {
  readonly total: number;
  readonly items: readonly Item[];
}

/**
 * The catalog of items in memory, kept equal to the store: loaded at start, updated by this
 * process's writes and by other replicas' writes (shared store). Reads never touch the store,
 * so they keep working while a shared store is down.
 */
export class ContentService {
  private readonly items = new Map<string, Item>();
  private readonly listeners: ContentListener[] = [];
  private sortedCache = new Map<ItemType | 'all', Item[]>();
  private loaded = false;
  private losses: StoreLosses = { events: 0, items: 0 };

  constructor(
    readonly store: ContentStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Subscribes to changes (the search index and the result cache do). */
  onChange(listener: ContentListener): void {
    this.listeners.push(listener);
  }

  /** True once the catalog holds the store's content. */
  get ready(): boolean {
    return this.loaded;
  }

  /**
   * Loads every item. With a shared store that is down, starts empty and lets the store's
   * change reader load the content once it is back (logged); a damaged file store throws.
   */
  async start(): Promise<void> {
    this.store.onRemoteChange({
      change: async ({ ids }) => {
        const items = await this.store.getMany(ids);
        await this.apply(items);
      },
      resync: async () => {
        const stored = await this.store.load();
        await this.reset(await this.keepLost(stored));
        this.logger.info({ items: this.items.size }, 'content reloaded from the shared store');
      },
    });
    try {
      await this.reset(await this.store.load());
    } catch (e) {
      if (!(e instanceof StoreUnavailableError)) throw e;
      this.logger.warn({ err: e.message }, 'content store unreachable at start; serving no content until it returns');
    }
  }

  /** Losses of the shared store seen so far (shown by `/health`). */
  get storeLosses(): StoreLosses {
    return this.losses;
  }

  /**
   * `stored` plus the items this replica holds that the shared store no longer has, written back.
   *
   * Items are never deleted, so a held item missing from the store was lost by it: a Redis that
   * restarted without persistence, was flushed, or failed over to a stale copy. Following the
   * store would silently empty every replica's catalog, so the replica keeps serving what it
   * holds, warns with the counts, and writes the missing items back (only where still absent,
   * so a newer write made meanwhile wins); other replicas and new ones load them from there.
   * A failed write-back throws, so the reader resyncs and tries again, the catalog untouched.
   */
  private async keepLost(stored: readonly Item[]): Promise<readonly Item[]> {
    if (!this.loaded || !this.items.size) return stored;
    const present = new Set(stored.map((i) => i.id));
    const lost = [...this.items.values()].filter((i) => !present.has(i.id));
    if (!lost.length) return stored;
    this.losses = { events: this.losses.events + 1, items: this.losses.items + lost.length };
    this.logger.warn(
      { held_items: this.items.size, store_items: stored.length, lost_items: lost.length },
      'the shared content store lost items this replica holds (kvstore restarted without persistence or flushed?); keeping them and writing them back',
    );
    if (this.store.restore) await this.store.restore(lost);
    return [...stored, ...lost];
  }

  private async reset(all: readonly Item[]): Promise<void> {
    this.items.clear();
    for (const i of all) this.items.set(i.id, i);
    this.sortedCache.clear();
    this.loaded = true;
    await this.notify({ upserted: [], reset: true, all });
  }

  private async apply(items: readonly Item[]): Promise<void> {
    if (!items.length) return;
    for (const i of items) this.items.set(i.id, i);
    this.sortedCache.clear();
    await this.notify({ upserted: items, reset: false });
  }

  private async notify(change: ContentChange): Promise<void> {
    for (const l of this.listeners) await l(change);
  }

  /**
   * Stores validated items (an existing id is replaced, keeping its `created_at`), all or
   * nothing, and resolves once they are durable and searchable. Ids must be distinct within one
   * call (see `ingestWithChanges`). Throws `StoreUnavailableError` when the store cannot write now.
   */
  async ingest(inputs: ReadonlyArray<ItemInput & { id: string }>): Promise<Item[]> {
    return (await this.ingestWithChanges(inputs)).map((r) => r.item);
  }

  /**
   * `ingest`, saying for each input whether it created, updated or left its item unchanged. An
   * item whose content equals the catalog's is not written again (its `updated_at` stays), so
   * re-sending a folder costs no store write and no re-indexing.
   *
   * Two inputs with one id throw before anything is written: one would silently replace the
   * other while both were reported stored. Callers refuse colliding ids with the items named
   * (`id-collisions.ts`); this is the guard for one that does not.
   */
  async ingestWithChanges(inputs: ReadonlyArray<ItemInput & { id: string }>): Promise<Array<{ item: Item; change: ItemChange }>> {
    const now = this.clock.now();
    const byId = new Map<string, { item: Item; change: ItemChange }>();
    for (const input of inputs) {
      if (byId.has(input.id)) throw new Error(`id "${input.id}" appears more than once in one write; nothing was stored`);
      const previous = this.items.get(input.id);
      if (previous && sameContent(input, previous)) byId.set(input.id, { item: previous, change: 'unchanged' });
      else byId.set(input.id, { item: stamp(input, now, previous), change: previous ? 'updated' : 'created' });
    }
    const written = [...byId.values()].filter((r) => r.change !== 'unchanged').map((r) => r.item);
    // The plain text of each body, once, at write time: stored with the item, read by chat.
    for (const item of written) plainTextOf(item);
    if (written.length) {
      await this.store.putMany(written);
      await this.apply(written);
    }
    return inputs.map((i) => byId.get(i.id)!);
  }

  /** One item, or undefined. */
  get(id: string): Item | undefined {
    return this.items.get(id);
  }

  /** Items in the catalog. */
  get size(): number {
    return this.items.size;
  }

  /** Every item of a type (or all, by type then newest first), newest first. */
  all(scope: ItemType | 'all' = 'all'): readonly Item[] {
    let sorted = this.sortedCache.get(scope);
    if (!sorted) {
      const order = { article: 0, project: 1, experience: 2 };
      sorted = [...this.items.values()].filter((i) => scope === 'all' || i.type === scope);
      sorted.sort((a, b) => (scope === 'all' ? order[a.type] - order[b.type] : 0) || compareNewestFirst(a, b));
      this.sortedCache.set(scope, sorted);
    }
    return sorted;
  }

  /** A page of one type, newest first, optionally only items with `tag` (case-insensitive). */
  list(type: ItemType, opts: { limit: number; offset: number; tag?: string }): ListPage {
    let items = this.all(type);
    if (opts.tag) {
      const tag = opts.tag.toLowerCase();
      items = items.filter((i) => i.tags.some((t) => t.toLowerCase() === tag));
    }
    return { total: items.length, items: items.slice(opts.offset, opts.offset + opts.limit) };
  }
}
