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
import { itemDay, isEmptyFilter, matches, normalFilter, type FilterFields, type ItemFilter } from './item-filter';
import { catalogueRank, listingFields, packItem, sameRecord, unwrapItem } from './lazy-item';
import { SortedListing } from './listing/sorted-listing';
import { TagIndex } from './listing/tag-index';
import { keepPlainText, plainText, plainTextOf } from './plain-text';
import { STEP_BUDGET_MS, stepper } from '../lib/yield-to-loop';
import { StoreUnavailableError, type ContentStore } from './content-store';
import {
  matchedAndNamed,
  patchedInput,
  refuseSharedIds,
  unknownPatch,
  type ContentOperations,
  type OperationsOutcome,
  type WrittenItem,
} from './operations';

/** What a filter reads of an item: a packed item answers from its listing keys, unparsed. */
function filterFields(item: Item): FilterFields {
  return { type: item.type, ...listingFields(item) };
}

/** What changed in the in-memory copy: some items upserted and some ids deleted, or a reload merged in (`reset`: `all` then holds all of it). */
export interface ContentChange {
  readonly upserted: readonly Item[];
  /** Ids no longer held (deleted here or by another replica); empty on a reset (`all` is the whole content). */
  readonly removed: readonly string[];
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

/** Write-backs remembered for taking deleted items off `store_losses` again (see `uncountWriteBacks`). */
const MAX_WRITE_BACKS_REMEMBERED = 100_000;

/** Items between two checks of whether a reload's step is used up (a power of 2). */
const STEP_CHECK_ITEMS = 128;

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

/** Filtered or re-sorted listings `ContentService.list` keeps (each an array of references to the type's items). */
const DERIVED_LISTINGS = 8;

export interface ListPage {
  readonly total: number;
  readonly items: readonly Item[];
}

/**
 * The in-memory copy of the items, kept equal to the store: loaded at start, updated by this
 * process's writes and by other replicas' writes (shared store). Reads never touch the store,
 * so they keep working while a shared store is down.
 *
 * Every item it holds, and passes to its listeners (the search index), is packed (lazy-item.ts:
 * its record's bytes plus its id, type, fingerprint and listing keys; other fields parsed per
 * use): a parsed item was ~16.6 heap objects for every full collection to mark, ~0.56 s of
 * marking at 1M items (issue 40). Loads, resyncs, other replicas' changes and writes are packed
 * as they enter.
 */
export class ContentService {
  private readonly items = new Map<string, Item>();
  /**
   * Moves at every write applied to `items` (an entry set or deleted): `write` re-checks what it
   * planned in steps only when this moved meanwhile.
   */
  private itemsChanged = 0;
  private readonly listeners: ContentListener[] = [];
  /** The listings by scope, each kept in order by merging writes in (sorted-listing.ts). */
  private readonly listings = new Map<ItemType | 'all', SortedListing>();
  /** `prepareListing` under way, per scope. */
  private readonly preparing = new Map<ItemType | 'all', Promise<void>>();
  /**
   * Listings filtered or sorted otherwise than newest first (`list`), by type, filter and sort, with
   * the listing each was made from (weakly: a replaced listing is not kept alive by it): valid
   * while that listing is the one served (the most recent `DERIVED_LISTINGS`).
   */
  private readonly derivedListings = new Map<string, { from: WeakRef<readonly Item[]>; items: readonly Item[] }>();
  /** Each type's items by tag, kept in listing order (tag-index.ts). */
  private readonly tagIndexes = new Map<ItemType, TagIndex>();
  private loaded = false;
  private losses: StoreLosses = { events: 0, items: 0 };
  /**
   * Ids this replica wrote back and counted in `losses`, with the reload that did (the newest
   * `MAX_WRITE_BACKS_REMEMBERED`), and how many of each reload's stay counted: one that another
   * replica's restored deletion removes again was a deleted item, not a loss (`uncountWriteBacks`).
   */
  private readonly writtenBack = new Map<string, number>();
  private readonly writtenBackPerEvent = new Map<number, number>();
  /** One set per running resync: the ids applied since it began (their value in the in-memory copy wins). */
  private readonly touchedDuringResync = new Set<Set<string>>();
  /** This replica's store writes not settled yet (a reload waits for those sent before it began). */
  private readonly writesInFlight = new Set<Promise<void>>();

  constructor(
    readonly store: ContentStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /**
     * Budget of a step of its passes over many items (`stepper`), ms. Tests give 0: a yield after
     * every item, so that other writes and remote changes interleave with each.
     */
    private readonly stepMs = STEP_BUDGET_MS,
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
      change: async ({ ids, deleted = {}, restoredDeletions }) => {
        // An id the change deleted and the store no longer holds leaves this copy too, unless this
        // replica holds a newer version (written after the deletion: the store lost it) or wrote
        // it again while the read was out (its entry changed since). One absent that the change
        // did not delete was lost by the store: kept (the next reload writes it back).
        const named = Object.keys(deleted);
        const before = named.map((id) => this.items.get(id));
        const items = await this.store.getMany(ids);
        const present = new Set(items.map((i) => i.id));
        const unchanged = named.filter((id, k) => !present.has(id) && this.items.get(id) === before[k]);
        const newer = (id: string) => Date.parse(this.items.get(id)?.updated_at ?? '') > deleted[id];
        const absent = unchanged.filter((id) => !newer(id));
        // Held newer than the deletion (writes of the id landed out of their clocks' order, or the
        // store lost the newer one): the store's tombstones decide, as at a reload.
        const suspect = unchanged.filter(newer);
        if (suspect.length)
          for (const id of await this.writeBack(suspect.map((id) => this.items.get(id)!)))
            if (this.items.get(id) === before[named.indexOf(id)]) absent.push(id);
        await this.apply(items, absent);
        if (restoredDeletions) this.uncountWriteBacks(absent);
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
   * A pass over many items' `due`: after each item (or comparison), what it returns awaited, the
   * end of a step of `stepMs` (`stepper`). Whether the step is used up is asked every
   * `STEP_CHECK_ITEMS` calls: a `performance.now()` for each was ~50 ns, ~0.15 s of CPU over a
   * reload's three passes at a million items.
   */
  private itemSteps(): () => Promise<void> | undefined {
    const step = stepper(this.stepMs);
    const every = this.stepMs > 0 ? STEP_CHECK_ITEMS - 1 : 0;
    let n = 0;
    return () => ((++n & every) === 0 ? step() : undefined);
  }

  /**
   * Reloads from the store and MERGES what it holds into the in-memory copy; never replaces it.
   *
   * An id the scan lacks was either lost by the store (written back) or deleted while this
   * replica was not listening (dropped); the store tells which (its tombstones: `restore`):
   *
   * 1. Load (the store notes its change-stream position first; changes after it are replayed;
   *    a shared store also writes back the deletions it remembers that it lost, so a deletion it
   *    lost is known again before any write-back below can resurrect the item).
   * 2. Wait for this replica's writes sent before the load ended to settle, so each is either
   *    acknowledged (in the in-memory copy) or failed.
   * 3. Ids the in-memory copy applied while 1–2 ran (this replica's own writes, whose change notices it
   *    skips) are read again: the scan may predate them, and they may predate the scan. Each
   *    takes the value read, unless applied again since the read was sent (a write sent after
   *    the load ended follows the stream position, so anything newer is replayed).
   * 4. Every id the in-memory copy holds that the scan did not return (for an id of step 3: that
   *    the read again did not return either) is written back with the in-memory copy's value,
   *    each only where still absent (a newer write wins, and an item written after the scan
   *    began is left as it is). That covers items confirmed before the reload and lost by the
   *    store (a Redis that restarted without persistence, was flushed, or failed over to a copy
   *    without them) and writes the store lost while they were in flight. The replica serves
   *    them all the while. An id the store holds a deletion of (at least as new as the held
   *    item) is not written back: it was deleted, and leaves the in-memory copy here (unless
   *    applied again since step 3's read was sent: that write is newer).
   * 5. Every other id takes the scan's value (the held item stays where it is the same record:
   *    `sameRecord`, below).
   *
   * `store_losses` counts the items step 4 found absent and wrote: items confirmed stored (or
   * sent) and then lost by the store. One another replica wrote back first is counted there, so
   * summed over replicas each lost item counts once; one that another replica's restored deletion
   * removes again is taken off the count (it had been deleted, not lost). A failed step throws
   * (the reader resyncs and tries again) and leaves the in-memory copy as it was.
   *
   * The passes over every item after step 3 (the scan's ids, the held ids it lacks, the merge,
   * the deletions) run in steps of the event loop (`stepper`): at a million items they were one
   * turn of ~0.9 s of CPU for a reload, ~0.6 s for the first load (bench/content/resync.ts). A
   * write applied during a step's yield wins as one applied during steps 1–3 does: the merge
   * leaves its id as written whether it reaches the id before or after it, step 4 does not drop
   * it, and writes back at most the value held before it (only where the store lacks the id:
   * the write is there). Reads between two steps see the items merged so far, the listings too;
   * the listeners learn of the reload in the turn that ends it.
   *
   * The listings and tag indexes are kept through a reload, each id it sets or deletes marked as
   * a write's is (`enter`), so the next read merges those in (sorted-listing.ts). A reloaded item
   * whose record is the held one's (`sameRecord`: the same fingerprint and bytes, as after a
   * blip of Redis that came back with what it had) is not entered: the held item stays, in the
   * listings too. The merge a read would then do (k log N comparisons for k items changed) is
   * done before the last turn, in steps (`settle`), so the next read copies the listing once
   * (O(N)); a read between two steps merges what is marked by itself, as after a write. The
   * listings were reset instead, and the items of a shared store carry no catalogue rank, so the
   * first read sorted every item in one turn: 278 ms of CPU for the first `list('article')`,
   * 652 ms for the first `all()` at 200k items (bench/content/resync.ts).
   */
  private async resync(): Promise<void> {
    const touched = new Set<string>();
    this.touchedDuringResync.add(touched);
    let reread: Set<string> | undefined;
    let since: Set<string> | undefined;
    try {
      const stored = await this.store.load();
      await Promise.allSettled([...this.writesInFlight]);
      // Only a reload can find items missing (the first load has nothing to compare with).
      const reload = this.loaded;
      const again = [...touched];
      reread = new Set<string>();
      this.touchedDuringResync.add(reread);
      const fresh = again.length ? await this.store.getMany(again) : [];
      const readAgain = new Set(fresh.map((i) => i.id));
      // The passes below run in steps. An id applied during a yield from here on (`since`) keeps
      // the value applied: that write went through the store after the scan and the read again.
      // Any other id is decided as if every pass ran now, in this turn.
      since = new Set<string>();
      this.touchedDuringResync.add(since);
      const due = this.itemSteps();
      let s: Promise<void> | undefined;
      const lost: Item[] = [];
      if (reload) {
        const present = new Set<string>();
        for (const i of stored) {
          present.add(i.id);
          if ((s = due())) await s;
        }
        // Held ids the scan lacks, and ids applied meanwhile that the read again lacks too, each
        // with its value held now. The map is read as it is at each step: an id deleted during a
        // yield is not reached, and one applied during a yield (`since`) is left as written.
        for (const [id, item] of this.items) {
          if (!present.has(id) && !since.has(id) && (!touched.has(id) || !readAgain.has(id))) lost.push(item);
          if ((s = due())) await s;
        }
      }
      const deleted = lost.length ? await this.writeBack(lost, stored.length) : [];
      const upserted: Item[] = [];
      // An id applied during a yield of this pass is in `touched`: the value applied wins, over
      // the scan's whether the pass reaches the id before or after the write.
      for (const i of stored) {
        if (!touched.has(i.id) && this.took(i)) upserted.push(i);
        if ((s = due())) await s;
      }
      for (const i of fresh) if (!reread.has(i.id) && this.took(i)) upserted.push(i);
      for (const id of deleted) {
        if (!reread.has(id) && this.items.has(id)) this.enter(id, undefined);
        if ((s = due())) await s;
      }
      // The merges of the changes above that the next reads of the listings would do, in steps.
      const current = (id: string) => this.items.get(id);
      for (const l of this.listings.values()) await l.settle(current, due);
      for (const t of this.tagIndexes.values()) await t.settle(current, due);
      // The listeners' copy of every item, in the turn that ends the reload: one pass of plain
      // copies (~7 ms at a million items).
      this.loaded = true;
      await this.notify({ upserted, removed: [], reset: true, all: [...this.items.values()] });
    } finally {
      this.touchedDuringResync.delete(touched);
      if (reread) this.touchedDuringResync.delete(reread);
      if (since) this.touchedDuringResync.delete(since);
    }
  }

  /**
   * Enters the store's `item` as a reload does, unless the in-memory copy holds the same record
   * (`sameRecord`): that one is kept, and its listings with it. Returns whether it entered.
   */
  private took(item: Item): boolean {
    const held = this.items.get(item.id);
    if (held && sameRecord(held, item)) return false;
    this.enter(item.id, item, held);
    return true;
  }

  /**
   * Sets `id` to `item` in the in-memory copy (deletes it: undefined), marking its listings and
   * tag indexes with the item it replaces, `previous` (the next read merges it in: sorted-listing.ts).
   */
  private enter(id: string, item: Item | undefined, previous = this.items.get(id)): void {
    for (const l of this.listings.values()) l.mark(id, previous);
    for (const t of this.tagIndexes.values()) t.mark(id, previous, item);
    if (item) this.items.set(id, item);
    else this.items.delete(id);
    this.itemsChanged += 1;
  }

  /**
   * Writes back held items the store lacks (see `resync`), counting the ones it really wrote;
   * resolves with the ids the store holds deletions of (the caller drops them).
   */
  private async writeBack(lost: readonly Item[], storeItems?: number): Promise<readonly string[]> {
    const { written, deleted } = this.store.restore
      ? await this.store.restore(lost)
      : { written: lost.map((i) => i.id), deleted: [] };
    if (deleted.length)
      this.logger.info(
        { deleted_items: deleted.length },
        'items this replica held were deleted in the shared store while it was not listening; dropping them',
      );
    if (written.length === 0) return deleted;
    const event = this.losses.events + 1;
    this.losses = { events: event, items: this.losses.items + written.length };
    this.rememberWriteBacks(written, event);
    this.writtenBackPerEvent.set(event, written.length);
    this.logger.warn(
      { held_items: this.items.size, store_items: storeItems, lost_items: written.length },
      'the shared content store lost items this replica holds (kvstore restarted without persistence, flushed, or failed over to a copy without them); keeping them and writing them back',
    );
    return deleted;
  }

  /**
   * Remembers `written` (distinct ids) as written back by reload `event`, keeping the newest
   * `MAX_WRITE_BACKS_REMEMBERED`: at least that many leave exactly the last of them, and fewer
   * evict the oldest entries through one iterator. Evicting each through a new `keys().next()`
   * walked the slots its predecessors had emptied at the front of the map: quadratic, 1.49 s for
   * 200,000 items written back in one turn (13.7 s for 400,000), a Redis that lost everything.
   */
  private rememberWriteBacks(written: readonly string[], event: number): void {
    const from = Math.max(0, written.length - MAX_WRITE_BACKS_REMEMBERED);
    if (written.length >= MAX_WRITE_BACKS_REMEMBERED) this.writtenBack.clear();
    const oldest = this.writtenBack.keys();
    for (let k = from; k < written.length; k++) {
      const id = written[k];
      this.writtenBack.delete(id);
      this.writtenBack.set(id, event);
      if (this.writtenBack.size > MAX_WRITE_BACKS_REMEMBERED) this.writtenBack.delete(oldest.next().value!);
    }
  }

  /**
   * Takes `ids` off `store_losses` where this replica had counted them as written back: another
   * replica wrote back its deletion of them (it knew they were deleted before the store lost
   * them), so they were deleted items, not losses. A reload whose every item is taken off stops
   * counting as an event.
   */
  private uncountWriteBacks(ids: readonly string[]): void {
    let { events, items } = this.losses;
    for (const id of ids) {
      const event = this.writtenBack.get(id);
      if (event === undefined) continue;
      this.writtenBack.delete(id);
      items--;
      const left = (this.writtenBackPerEvent.get(event) ?? 1) - 1;
      this.writtenBackPerEvent.set(event, left);
      if (left === 0) events--;
    }
    this.losses = { events, items };
  }

  /**
   * Enters a write in the in-memory copy, its listings and tag indexes, an id at a time in steps
   * of the event loop (time-steps.ts): `removed` ids leave it, then `written` enter, packed (the two are
   * disjoint). For the 10,000 items of a full upload, with the listings and tag indexes built,
   * one step was ~10-25 ms (issue 37). Each item enters or leaves whole; a read between two steps
   * sees some of a write's changes and not yet the others, as the search index (which indexes a
   * write an item at a time) already shows it. The write is acknowledged only once all are in,
   * and the listeners (the search index) are told of both.
   */
  private async apply(written: readonly Item[], removed: readonly string[] = []): Promise<void> {
    const items: Item[] = [];
    const gone: string[] = [];
    const step = stepper(this.stepMs);
    for (const id of removed) {
      const previous = this.items.get(id);
      for (const t of this.touchedDuringResync) t.add(id);
      if (previous === undefined) continue;
      this.enter(id, undefined);
      gone.push(id);
      const s = step();
      if (s) await s;
    }
    for (const w of written) {
      // Packed already (the stores' `getMany` and a write's stamping pack them): a look-up, kept
      // as a guard, a step each.
      const i = packItem(w);
      items.push(i);
      this.enter(i.id, i);
      for (const t of this.touchedDuringResync) t.add(i.id);
      const s = step();
      if (s) await s;
    }
    if (items.length || gone.length) await this.notify({ upserted: items, removed: gone, reset: false });
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
  async ingestWithChanges(inputs: ReadonlyArray<ItemInput & { id: string }>): Promise<WrittenItem[]> {
    const ids = new Set<string>();
    for (const input of inputs) {
      if (ids.has(input.id))
        throw new Error(`id "${input.id}" appears more than once in one write; nothing was stored`);
      ids.add(input.id);
    }
    return [...(await this.write({ items: inputs })).items];
  }

  /**
   * Applies one request's operations (operations.ts: `delete_where`, `delete`, `patch`, `items`)
   * as ONE store write of puts and deletes, all or nothing, and resolves once it is durable, the
   * in-memory copy, listings and tag indexes follow it and the listeners (search index, result
   * cache) were told. Every operation is evaluated against the in-memory copy as it is when the
   * write runs: `delete_where` deletes every item that matches then, `delete` reports the ids not
   * held as `notFound`, a patch is merged into the stored item and validated whole (as ingest
   * validates), and an item equal to its stored version is not written again.
   *
   * Refused as a whole, nothing written (`OperationRefused`): an id named by two of `delete`,
   * `patch` and `items`, a `delete_where` match that `patch` or `items` names (an id it matches
   * may also be in `delete`: deleted, reported by both), a patch of an id not held, a patch
   * that breaks a field rule. Throws `StoreUnavailableError` when the store cannot write now.
   *
   * The work over many ids runs in steps of the event loop (the `delete_where` scan over every
   * item, plain texts, stamping); what it was planned against is checked again after the last
   * step, in the step of the store write, and planned again for every id whose entry changed
   * meanwhile (another write applied between two steps), so the write is as if planned in one step.
   */
  async write(ops: ContentOperations): Promise<OperationsOutcome> {
    refuseSharedIds(ops);
    // A shared store may hold ids this replica has not heard of yet (their change notice is on
    // its way): a delete of one sent here is still a delete. The store is asked about the ids of
    // `delete` the in-memory copy lacks; those it holds are deleted like held ones.
    const shared = this.store.kind === 'kvstore';
    const unheard = (ops.delete ?? []).filter((id) => !this.items.has(id));
    const heard = new Set<string>();
    if (unheard.length && shared) {
      let held: readonly Item[];
      try {
        held = await this.store.getMany(unheard);
      } catch (e) {
        if (e instanceof StoreUnavailableError) throw e;
        throw new StoreUnavailableError(
          `could not read the ids to delete: ${(e as Error).message}; nothing was stored`,
        );
      }
      for (const i of held) heard.add(i.id);
    }
    const step = stepper(this.stepMs);
    const pause = async () => {
      const s = step();
      if (s) await s;
    };
    const planned = this.itemsChanged;
    // delete_where: every item that matches, in steps (a packed item is matched by its listing
    // keys, not parsed), each with the entry it was matched on.
    const matched = new Map<string, Item>();
    const filter = ops.deleteWhere;
    if (filter) {
      for (const [id, item] of this.items) {
        if (matches(filterFields(item), filter)) matched.set(id, item);
        await pause();
      }
    }
    const patches = ops.patch ?? [];
    const items = ops.items ?? [];
    // What each patch and item is written from: a patch re-merged if its stored item changed.
    const inputs: Array<{ id: string; input: () => ItemInput & { id: string } }> = [
      ...patches.map((p, k) => ({
        id: p.id,
        input: () => {
          const stored = this.items.get(p.id);
          if (stored === undefined) throw unknownPatch(p.id, k);
          return patchedInput(p, k, unwrapItem(stored));
        },
      })),
      ...items.map((i) => ({ id: i.id, input: () => i })),
    ];
    const named = new Map<string, string>();
    patches.forEach((p, k) => named.set(p.id, `patch.${k}.id`));
    items.forEach((i, k) => named.set(i.id, `items.${k}.id`));
    // The plain text of each new body, once, at write time (stored with the item, read by chat),
    // an item at a time in steps of the event loop: a batch's bodies may be megabytes.
    const plain = new Map<string, string>();
    const firstInputs = inputs.map((x) => x.input());
    for (const input of firstInputs) {
      const previous = this.items.get(input.id);
      if (previous && sameContent(input, previous)) continue;
      plain.set(input.body, plainText(input.body));
      await pause();
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
      const stamped = stamp(input, now, previous);
      const text = plain.get(stamped.body);
      if (text === undefined) plainTextOf(stamped);
      else keepPlainText(stamped, text);
      // Held packed from here on (the store writes it, the in-memory copy and the index hold it).
      const item = packItem(stamped);
      return { item, change: previous ? ('updated' as const) : ('created' as const), against: previous };
    };
    for (const input of firstInputs) {
      byId.set(input.id, outcome(input));
      await pause();
    }
    // After the last step, in the step of the store write: the plan checked against the in-memory copy now.
    for (const x of inputs) {
      if (this.items.get(x.id) !== byId.get(x.id)!.against) byId.set(x.id, outcome(x.input()));
    }
    // The matches only when a write was applied since the scan began: a delete_where of 50,000
    // re-checked and gathered through a Set in this one step took ~60 ms of it (issue 39).
    if (this.itemsChanged !== planned) {
      for (const [id, was] of matched) {
        const current = this.items.get(id);
        if (current === was) continue;
        if (current !== undefined && matches(filterFields(current), filter!)) matched.set(id, current);
        else matched.delete(id);
      }
    }
    if (named.size)
      for (const id of matched.keys()) {
        const place = named.get(id);
        if (place !== undefined) throw matchedAndNamed(id, place);
      }
    const deleted: string[] = [];
    const notFound: string[] = [];
    for (const id of new Set(ops.delete ?? [])) (this.items.has(id) || heard.has(id) ? deleted : notFound).push(id);
    // On a shared store an id found nowhere is deleted too (a tombstone): the store may have lost
    // it (a Redis restarted empty) while a replica still holds it and would write it back. Each
    // id once: the matches, then those of the others (at most 1,000) that are not among them.
    const removed = [...matched.keys()];
    for (const id of [...deleted, ...(shared ? notFound : [])]) if (!matched.has(id)) removed.push(id);
    const written: Item[] = [];
    for (const r of byId.values()) if (r.change !== 'unchanged') written.push(r.item);
    if (written.length || removed.length) {
      const put = this.store.write(written, removed);
      this.writesInFlight.add(put);
      try {
        await put;
      } finally {
        this.writesInFlight.delete(put);
      }
      await this.apply(written, removed);
    }
    const result = (id: string): WrittenItem => {
      const { item, change } = byId.get(id)!;
      return { item, change };
    };
    return {
      deletedWhere: [...matched.keys()],
      deleted,
      notFound,
      patched: patches.map((p) => result(p.id)),
      items: items.map((i) => result(i.id)),
    };
  }

  /** One item, or undefined: packed, as held (lazy-item.ts: it reads as the plain item, parsed per use). */
  get(id: string): Item | undefined {
    return this.items.get(id);
  }

  /** Items in the in-memory copy. */
  get size(): number {
    return this.items.size;
  }

  /**
   * Every item of the in-memory copy, in no order (no listing is built: a listing's first read
   * sorts every item without a catalogue rank in one turn, as after a start from Redis: 1.4-3.7 s
   * at 1M items). Read across yields it sees changes applied meanwhile as a `Map`'s
   * iteration does: an item deleted before it is reached is not met, one added is met at the end.
   */
  each(): Iterable<Item> {
    return this.items.values();
  }

  /**
   * Every item of a type (or all, by type then newest first), newest first. Items stay packed in
   * it (they behave as plain ones, compared by their listing keys without being parsed; a
   * catalogue's are placed by their rank: sorted-listing.ts), so reading a listing parses only
   * the items whose other fields are read.
   */
  all(scope: ItemType | 'all' = 'all'): readonly Item[] {
    return this.listingOf(scope).items(
      () => this.itemsOf(scope),
      (id) => this.items.get(id),
    );
  }

  /**
   * Makes the listing of `scope` ready in steps, so that the next `all(scope)` or `list` of it
   * only hands it out (`SortedListing.prepare`: the first read after a start from Redis sorted
   * every item in one turn; then `settle` for what writes marked). The listing routes and the
   * export await it; concurrent calls share one.
   */
  prepareListing(scope: ItemType | 'all' = 'all'): Promise<void> {
    let p = this.preparing.get(scope);
    if (!p) {
      const listing = this.listingOf(scope);
      const due = this.itemSteps();
      p = (async () => {
        try {
          await listing.prepare(() => this.itemsOf(scope), due);
          await listing.settle((id) => this.items.get(id), due);
        } finally {
          this.preparing.delete(scope);
        }
      })();
      this.preparing.set(scope, p);
    }
    return p;
  }

  /** The listing of `scope`, made (empty) at its first use. */
  private listingOf(scope: ItemType | 'all'): SortedListing {
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
    return listing;
  }

  /** Every item of `scope` as the in-memory copy holds it (a packed item's type is read without parsing it). */
  private *itemsOf(scope: ItemType | 'all'): Iterable<Item> {
    for (const item of this.items.values()) if (scope === 'all' || item.type === scope) yield item;
  }

  /**
   * A page of one type, newest first, optionally only items with `tag` (case-insensitive, from the
   * type's tag index: tag-index.ts). Only the page's items are parsed (see `all`). With a filter
   * of several tags or dates, the type's listing is filtered (`matches`, on fields a packed item
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
    const sort = opts.sort && opts.sort !== 'date:desc' ? opts.sort : undefined;
    if (!isEmptyFilter(rest) || sort) {
      // Filtered or sorted once per version of the listing it starts from (a write makes a new one).
      const key = `${type}\u0000${tags.length === 1 ? tags[0].toLowerCase() : ''}\u0000${sort ?? ''}\u0000${JSON.stringify(normalFilter(rest))}`;
      const kept = this.derivedListings.get(key);
      if (kept?.from.deref() === items) items = kept.items;
      else {
        const from = items;
        if (!isEmptyFilter(rest)) items = items.filter((i) => matches(i, rest));
        if (sort) items = [...items].sort(LIST_ORDERS[sort]);
        this.derivedListings.delete(key);
        if (this.derivedListings.size >= DERIVED_LISTINGS)
          this.derivedListings.delete(this.derivedListings.keys().next().value!);
        this.derivedListings.set(key, { from: new WeakRef(from), items });
      }
    }
    const page = items.slice(opts.offset, opts.offset + opts.limit);
    return { total: items.length, items: page };
  }
}
