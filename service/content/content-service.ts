import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { compareNewestFirst, stamp, type Item, type ItemInput, type ItemType } from './item';
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
        await this.reset(await this.store.load());
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
   * nothing, and resolves once they are durable and searchable. Within one call a later
   * duplicate id wins. Throws `StoreUnavailableError` when the store cannot write now.
   */
  async ingest(inputs: ReadonlyArray<ItemInput & { id: string }>): Promise<Item[]> {
    const now = this.clock.now();
    const byId = new Map<string, Item>();
    for (const input of inputs) byId.set(input.id, stamp(input, now, this.items.get(input.id)));
    const items = [...byId.values()];
    await this.store.putMany(items);
    await this.apply(items);
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
