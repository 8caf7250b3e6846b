import type { Logger } from 'pino';
import type { Clock } from '../lib/clock';
import {
  compareNewestFirst,
  sameContent,
  stamp,
  type Item,
  type ItemChange,
  type ItemInput,
  type ItemType,
} from './item';
import { itemDay, isEmptyFilter, matches, type ItemFilter } from './item-filter';
import { catalogueRank, unwrapItem } from './lazy-item';
import { SortedListing } from './listing/sorted-listing';
import { TagIndex } from './listing/tag-index';
import { keepPlainText, plainText, plainTextOf } from './plain-text';
import { stepper } from '../lib/yield-to-loop';
import { StoreUnavailableError, type ContentStore } from './content-store';

/** What changed in the in-memory copy: some items upserted, or a reload merged in (`reset`: `all` then holds all of it). */
export interface ContentChange {
  readonly upserted: readonly Item[];
  /** True after a reload from the store (merged in, never replacing); `all` then holds every item. */
  readonly reset: boolean;
  readonly all?: readonly Item[];
}

/** Told of every change before the write that caused it resolves (so content is searchable at once). */
export type ContentListener = (change: ContentChange) => Promise<void>;

/**
 * Losses of the shared store this replica repaired: `items` counts items it had confirmed stored,
 * found absent on a reload and wrote back (HSETNX answered "set": nobody had written them back
 * first); `events` the reloads that wrote back at least one. Summed over replicas, each lost item
 * counts once.
 */
export interface StoreLosses {
  readonly events: number;
  readonly items: number;
}

/** The order of types in a listing of every item. */
const TYPE_ORDER: Readonly<Record<ItemType, number>> = { article: 0, project: 1, experience: 2 };

/** A page of a listing. */
/** The orders of a listing (`date:desc`: `compareNewestFirst`, the listing's own). */
export type ListSort = 'date:desc' | 'date:asc' | 'updated:desc';

const byId = (a: Item, b: Item) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
/** The other sorts of a listing: by the item's day ascending, or by `updated_at` descending; ties by id. */
const LIST_ORDERS: Record<Exclude<ListSort, 'date:desc'>, (a: Item, b: Item) => number> = {
  'date:asc': (a, b) => {
    const x = itemDay(a);
    const y = itemDay(b);
    return x < y ? -1 : x > y ? 1 : byId(a, b);
  },
  'updated:desc': (a, b) => (a.updated_at > b.updated_at ? -1 : a.updated_at < b.updated_at ? 1 : byId(a, b)),
};

export interface ListPage {
  readonly total: number;
  readonly items: readonly Item[];
}

/**
 * The in-memory copy of the items, kept equal to the store: loaded at start, updated by this
 * process's writes and by other replicas' writes (shared store). Reads never touch the store,
 * so they keep working while a shared store is down.
 */
export class ContentService {
  private readonly items = new Map<string, Item>();
  private readonly listeners: ContentListener[] = [];
  /** The listings by scope, each kept in order by merging writes in (sorted-listing.ts). */
  private readonly listings = new Map<ItemType | 'all', SortedListing>();
  /** Each type's items by tag, kept in listing order (tag-index.ts). */
  private readonly tagIndexes = new Map<ItemType, TagIndex>();
  private loaded = false;
  private losses: StoreLosses = { events: 0, items: 0 };
  /** One set per running resync: the ids applied since it began (their value in the in-memory copy wins). */
  private readonly touchedDuringResync = new Set<Set<string>>();
  /** This replica's store writes not settled yet (a reload waits for those sent before it began). */
  private readonly writesInFlight = new Set<Promise<void>>();

  constructor(
    readonly store: ContentStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Subscribes to changes (the search index and the result cache do). */
  onChange(listener: ContentListener): void {
    this.listeners.push(listener);
  }

  /** True once the in-memory copy holds the store's content. */
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
        await this.resync();
        this.logger.info({ items: this.items.size }, 'content reloaded from the shared store');
      },
    });
    try {
      await this.resync();
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
   * Reloads from the store and MERGES what it holds into the in-memory copy; never replaces it.
   *
   * Items are never deleted, so the in-memory copy never shrinks:
   *
   * 1. Load (the store notes its change-stream position first; changes after it are replayed).
   * 2. Wait for this replica's writes sent before the load ended to settle, so each is either
   *    acknowledged (in the in-memory copy) or failed.
   * 3. Every id the in-memory copy holds that the scan did not return is written back with the
   *    in-memory copy's value, each only where still absent (HSETNX: a newer write wins, and an item
   *    written after the scan began is left as it is). That covers items confirmed before the
   *    reload and lost by the store (a Redis that restarted without persistence, was flushed, or
   *    failed over to a copy without them) and writes the store lost while they were in flight.
   *    The replica serves them all the while.
   * 4. Ids the in-memory copy applied while 1–2 ran (this replica's own writes, whose change notices it
   *    skips) are read again: the scan may predate them, and they may predate the scan. Each
   *    takes the value read, unless applied again since the read was sent (a write sent after
   *    the load ended follows the stream position, so anything newer is replayed).
   * 5. Every other id takes the scan's value.
   *
   * `store_losses` counts the items step 3 found absent and wrote: items confirmed stored (or
   * sent) and then lost by the store. One another replica wrote back first is counted there, so
   * summed over replicas each lost item counts once. A failed step throws (the reader resyncs and
   * tries again) and leaves the in-memory copy as it was.
   */
  private async resync(): Promise<void> {
    const touched = new Set<string>();
    this.touchedDuringResync.add(touched);
    let reread: Set<string> | undefined;
    try {
      const stored = await this.store.load();
      await Promise.allSettled([...this.writesInFlight]);
      // Only a reload can find items missing (the first load has nothing to compare with).
      const present = this.loaded ? new Set(stored.map((i) => i.id)) : undefined;
      const missing = present ? [...this.items.keys()].filter((id) => !present.has(id)) : [];
      if (missing.length) await this.writeBack(missing, stored.length);
      const again = [...touched];
      let fresh: Item[] = [];
      if (again.length) {
        reread = new Set<string>();
        this.touchedDuringResync.add(reread);
        fresh = await this.store.getMany(again);
      }
      const upserted: Item[] = [];
      for (const i of stored) {
        if (touched.has(i.id)) continue;
        this.items.set(i.id, i);
        upserted.push(i);
      }
      for (const i of fresh) {
        if (reread?.has(i.id)) continue;
        this.items.set(i.id, i);
        upserted.push(i);
      }
      for (const l of this.listings.values()) l.reset();
      for (const t of this.tagIndexes.values()) t.reset();
      this.loaded = true;
      await this.notify({ upserted, reset: true, all: [...this.items.values()] });
    } finally {
      this.touchedDuringResync.delete(touched);
      if (reread) this.touchedDuringResync.delete(reread);
    }
  }

  /** Writes back held items the store lacks (see `resync`), counting the ones it really wrote. */
  private async writeBack(ids: readonly string[], storeItems: number): Promise<void> {
    const lost = ids.map((id) => this.items.get(id)).filter((i): i is Item => i !== undefined);
    const written = this.store.restore ? await this.store.restore(lost) : lost.length;
    if (written === 0) return;
    this.losses = { events: this.losses.events + 1, items: this.losses.items + written };
    this.logger.warn(
      { held_items: this.items.size, store_items: storeItems, lost_items: written },
      'the shared content store lost items this replica holds (kvstore restarted without persistence, flushed, or failed over to a copy without them); keeping them and writing them back',
    );
  }

  /**
   * Enters stored items in the in-memory copy, its listings and tag indexes, an item at a time in steps
   * of the event loop (time-steps.ts): for the 10,000 items of a full upload, with the listings
   * and tag indexes built, one step was ~10-25 ms (issue 37). Each item enters whole; a read
   * between two steps sees some of a write's items and not yet the others, as the search index
   * (which indexes a write an item at a time) already shows it. The write is acknowledged only
   * once all are in.
   */
  private async apply(items: readonly Item[]): Promise<void> {
    if (!items.length) return;
    const step = stepper();
    for (const i of items) {
      const previous = this.items.get(i.id);
      for (const l of this.listings.values()) l.mark(i.id, previous);
      for (const t of this.tagIndexes.values()) t.mark(i.id, previous, i);
      this.items.set(i.id, i);
      for (const t of this.touchedDuringResync) t.add(i.id);
      await step();
    }
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
   * item whose content equals the in-memory copy's is not written again (its `updated_at` stays), so
   * re-sending a folder costs no store write and no re-indexing.
   *
   * Two inputs with one id throw before anything is written: one would silently replace the
   * other while both were reported stored. Callers refuse colliding ids with the items named
   * (`id-collisions.ts`); this is the guard for one that does not.
   */
  async ingestWithChanges(
    inputs: ReadonlyArray<ItemInput & { id: string }>,
  ): Promise<Array<{ item: Item; change: ItemChange }>> {
    const ids = new Set<string>();
    for (const input of inputs) {
      if (ids.has(input.id))
        throw new Error(`id "${input.id}" appears more than once in one write; nothing was stored`);
      ids.add(input.id);
    }
    // The plain text of each new body, once, at write time (stored with the item, read by chat),
    // an item at a time in steps of the event loop: a batch's bodies may be megabytes.
    const plain = new Map<string, string>();
    const step = stepper();
    for (const input of inputs) {
      const previous = this.items.get(input.id);
      if (previous && sameContent(input, previous)) continue;
      plain.set(input.body, plainText(input.body));
      await step();
    }
    // Each item compared with the in-memory copy and stamped, also in steps (for 10,000 items of 50
    // tags this was ~40 ms in one step: issue 37). What it compares against must be the in-memory copy
    // of one moment, as if done in one step: after the last step, every item whose entry in the
    // in-memory copy changed meanwhile (another write applied between two steps) is compared and
    // stamped again, in the same step as the check.
    const now = this.clock.now();
    const byId = new Map<string, { item: Item; change: ItemChange; against: Item | undefined }>();
    const outcome = (input: ItemInput & { id: string }) => {
      const previous = this.items.get(input.id);
      if (previous && sameContent(input, previous))
        return { item: previous, change: 'unchanged' as const, against: previous };
      const item = stamp(input, now, previous);
      const text = plain.get(item.body);
      if (text === undefined) plainTextOf(item);
      else keepPlainText(item, text);
      return { item, change: previous ? ('updated' as const) : ('created' as const), against: previous };
    };
    for (const input of inputs) {
      byId.set(input.id, outcome(input));
      await step();
    }
    for (const input of inputs) {
      if (this.items.get(input.id) !== byId.get(input.id)!.against) byId.set(input.id, outcome(input));
    }
    const written: Item[] = [];
    for (const r of byId.values()) if (r.change !== 'unchanged') written.push(r.item);
    if (written.length) {
      const put = this.store.putMany(written);
      this.writesInFlight.add(put);
      try {
        await put;
      } finally {
        this.writesInFlight.delete(put);
      }
      await this.apply(written);
    }
    return inputs.map((i) => {
      const { item, change } = byId.get(i.id)!;
      return { item, change };
    });
  }

  /** One item, or undefined. (A store may load items lazily: the in-memory copy keeps the plain item once read.) */
  get(id: string): Item | undefined {
    const item = this.items.get(id);
    return item === undefined ? undefined : this.keepPlain(id, item);
  }

  /** `item` as a plain item, kept in the in-memory copy in place of a lazy one once read. */
  private keepPlain(id: string, item: Item): Item {
    const plain = unwrapItem(item);
    if (plain !== item) this.items.set(id, plain);
    return plain;
  }

  /** Items in the in-memory copy. */
  get size(): number {
    return this.items.size;
  }

  /**
   * Every item of a type (or all, by type then newest first), newest first. A store's lazy items
   * stay lazy in it (they behave as plain ones; a catalogue's are placed by their rank and
   * compared by its keys without being parsed: sorted-listing.ts), so reading a listing parses
   * only the items whose other fields are read.
   */
  all(scope: ItemType | 'all' = 'all'): readonly Item[] {
    let listing = this.listings.get(scope);
    if (!listing) {
      listing =
        scope === 'all'
          ? new SortedListing(
              (a, b) => TYPE_ORDER[a.type] - TYPE_ORDER[b.type] || compareNewestFirst(a, b),
              () => true,
              catalogueRank,
            )
          : new SortedListing(compareNewestFirst, (i) => i.type === scope, catalogueRank);
      this.listings.set(scope, listing);
    }
    return listing.items(
      () => this.itemsOf(scope),
      (id) => this.items.get(id),
    );
  }

  /** Every item of `scope` as the in-memory copy holds it (a lazy item's type is read without parsing it). */
  private *itemsOf(scope: ItemType | 'all'): Iterable<Item> {
    for (const item of this.items.values()) if (scope === 'all' || item.type === scope) yield item;
  }

  /**
   * A page of one type, newest first, optionally only items with `tag` (case-insensitive, from the
   * type's tag index: tag-index.ts). Only the page's items are parsed (see `all`). With a filter
   * of several tags or dates, the type's listing is filtered (`matches`, on fields a lazy item
   * reads without parsing); another `sort` sorts the kept items per request (ties by id).
   */
  list(
    type: ItemType,
    opts: { limit: number; offset: number; tag?: string; filter?: ItemFilter; sort?: ListSort },
  ): ListPage {
    const filter = opts.filter ?? {};
    const tags = opts.tag ? [opts.tag] : (filter.tag ?? []);
    let items: readonly Item[];
    if (tags.length === 1) {
      let index = this.tagIndexes.get(type);
      if (!index) this.tagIndexes.set(type, (index = new TagIndex(type, compareNewestFirst)));
      items = index.items(
        tags[0],
        () => this.all(type),
        (id) => this.items.get(id),
      );
    } else items = this.all(type);
    const rest: ItemFilter = { ...filter, ...(tags.length > 1 ? { tag: tags } : { tag: undefined }) };
    if (!isEmptyFilter(rest)) items = items.filter((i) => matches(i, rest));
    if (opts.sort && opts.sort !== 'date:desc') items = [...items].sort(LIST_ORDERS[opts.sort]);
    const page = items.slice(opts.offset, opts.offset + opts.limit).map((i) => this.keepPlain(i.id, i));
    return { total: items.length, items: page };
  }
}
