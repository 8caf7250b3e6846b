import { crc32 } from 'node:zlib';
import type { Item } from '../content/item';
import { itemFingerprint } from '../content/item-fingerprint';
import { plainTextOf, plainTextOfInSteps } from '../content/plain-text';
import { TimeSlicer } from '../lib/yield-to-loop';
import { Analyzer } from './analysis/analyzer';
import { CompactIndex } from './index/compact-index';
import type { SealedIndex } from './index/merge';
import type { SegmentStore } from './index/segment-store';
import { DocAttributeTable } from './doc-attributes';
import { TagDictionary } from './tag-dictionary';
import type { QueryGate } from './query-gate';
import type { IndexedField } from './ranking';

/*
 * The life of the embedded index's data, apart from its queries (embedded-index.ts): the
 * `CompactIndex` served and its documents' items, writes in order, the build and swap of a new
 * index, the restore from a persisted segment with the items entered lazily, the idle
 * checkpoint and the persist before exit.
 */

// The fields of `CompactIndex`, in the order their scores are summed (MiniSearch's field order before).
const FIELDS: readonly IndexedField[] = ['title', 'tags', 'text'];
// The field whose token positions are kept, for proximity (`proximity.ts`): `text` holds every term.
const POSITIONS_FIELD: IndexedField = 'text';

/** An item analysed: its terms per field of `FIELDS`, not yet in the index. */
interface Analysed {
  readonly fields: string[][];
  readonly fingerprint: number;
}

// Bodies at least this long are made plain and analysed in slices (yielding to the event loop between them).
const LARGE_TEXT = 32_768;

/**
 * What a persisted segment's terms were made with: the fields, and the analyser's output on a
 * probe text (stopwords, folding, stemming, numbers); a segment made otherwise is not loaded.
 */
export const SEGMENT_KEY = (() => {
  const probe =
    "The measurements of lasers' beams: naïve cafés, 42 runners running, l'été, résumé; a x ions-99 COHERENTLY";
  const terms = new Analyzer().analyze(probe).join(' ');
  // `search-segment/3`: issue 28's sixth slice added positions, so every older segment is refused
  // (and rebuilt) once anyway; the key took the name of what it is then (it was `minisearch-index/2`).
  return `search-segment/3;fields=${FIELDS.join(',')};positions=${POSITIONS_FIELD};analyzer=${crc32(terms).toString(16)}`;
})();

/** More changed items than this share of a persisted segment's documents: rebuild instead of re-indexing them. */
const REPLAY_LIMIT = 0.5;

/** Where the index served from the start came from (its first `replaceAll`), for the start's log line. */
export interface IndexOrigin {
  /** `segment`: restored from the persisted segment; `content`: built by analysing every item. */
  readonly from: 'segment' | 'content';
  /** Documents indexed. */
  readonly documents: number;
  /** Items analysed at the start: changed or new since the segment, or every item when built from the content. */
  readonly reindexed: number;
}

/**
 * What `persistBeforeExit` did: `persisted` (what was appended, or a segment already asked for,
 * is on disk now), `current` (the file already covered the index), `timed-out` (the budget ran
 * out: the file holds an older segment, whole), `failed` (the write failed: logged by the
 * segment store), `off` (no segments).
 */
export interface ExitPersist {
  readonly outcome: 'persisted' | 'current' | 'timed-out' | 'failed' | 'off';
  /** Documents in the index at the stop. */
  readonly documents: number;
  /**
   * Documents appended or deleted since the last merge when the stop began (`CompactIndex.unmergedDocs`,
   * a merge under way included): what the stop had to persist, and what a timed-out stop left out.
   */
  readonly appended: number;
  readonly ms: number;
}

/** Keeps a document (its id, its short id) or not (type and tag filters). */
export type Keep = (id: string, doc: number) => boolean;

/** Options of `IndexLifecycle`: `EmbeddedIndexOptions`' own, and what the embedded index shares with it. */
export interface LifecycleOptions {
  readonly analyzer: Analyzer;
  /** The embedded index's queries: writes and merges wait for the one under way. */
  readonly gate: QueryGate;
  readonly segments?: SegmentStore;
  /** @default 30000 */
  readonly checkpointIdleMs?: number;
  readonly minMergeDocs?: number;
  /** @default 10 */
  readonly indexSliceMs?: number;
  /**
   * Called when a merge's new base is swapped into the index served (its short ids may be
   * renumbered): the embedded index then prepares its browse structures again. @default none
   */
  readonly onMerged?: () => void;
}

/**
 * The `CompactIndex` an `EmbeddedIndex` serves and everything that changes it: writes (one at a
 * time, in slices, waiting for the query under way), builds swapped in whole, the restore from a
 * persisted segment (`SegmentStore`) with the restored documents' items entered after the
 * start, merges persisted after writes pause, and the persist on a graceful stop.
 */
export class IndexLifecycle {
  private readonly analyzer: Analyzer;
  private served: CompactIndex;
  /**
   * The items indexed, by id, as they were indexed: what snippets are cut from (`item`). The
   * items themselves, which their store holds anyway: a copy of what a hit reads (an object, a
   * body, a tag array per document) was ~3 heap objects a document more for every mark-compact
   * to visit (issue 40).
   */
  private docs = new Map<string, Item>();
  /** The tags' codes of every attribute table (the columns' too), kept across builds. */
  private readonly tags = new TagDictionary();
  /**
   * The served index's documents' attributes by slot (`attributeRow`), entered with each
   * document; a restored document's at its first read.
   */
  private attrs = new DocAttributeTable(this.tags);
  /** Entries deleted from `docs` since it was made (`compactDocs`). */
  private docsDeleted = 0;
  /** Items of documents restored from a segment that are not in `docs` yet (`allDocs`). */
  private pendingItems: Item[] | undefined;
  /** The same items by their short id at the restore, while `pendingItems` is pending (`item`). */
  private pendingByDoc: Array<Item | undefined> | undefined;
  private pendingAt = 0;
  /** `fillItems` under way, started by a write (`enterRestored`). */
  private filling: Promise<void> | undefined;
  private readonly indexSliceMs: number;
  private readonly segments: SegmentStore | undefined;
  private readonly checkpointIdleMs: number;
  private readonly minMergeDocs: number | undefined;
  private checkpointTimer: NodeJS.Timeout | undefined;
  // Set by `persistBeforeExit`: no idle checkpoint is armed any more.
  private stopping = false;
  private origin: IndexOrigin | undefined;
  // Only the first full build (the start) may come from a persisted segment.
  private segmentTried = false;
  // New bases of indexes not yet swapped in (a build in progress), persisted once they are.
  private readonly sealedAside = new WeakMap<CompactIndex, SealedIndex>();
  // Writes run one at a time, in order: a sliced `replaceAll` must not lose an upsert made
  // into the index it is about to replace.
  private writing: Promise<void> = Promise.resolve();
  // Queries run in slices, one at a time; writes wait for the one under way.
  private readonly gate: QueryGate;
  private readonly onMerged: (() => void) | undefined;

  constructor(opts: LifecycleOptions) {
    this.analyzer = opts.analyzer;
    this.gate = opts.gate;
    this.minMergeDocs = opts.minMergeDocs;
    this.segments = opts.segments;
    this.checkpointIdleMs = opts.checkpointIdleMs ?? 30_000;
    this.indexSliceMs = opts.indexSliceMs ?? 10;
    this.onMerged = opts.onMerged;
    this.served = this.create();
  }

  /** The index served now (a `replaceAll` swaps in another). */
  get compact(): CompactIndex {
    return this.served;
  }

  private create(): CompactIndex {
    const compact: CompactIndex = new CompactIndex(FIELDS, {
      positions: POSITIONS_FIELD,
      minMergeDocs: this.minMergeDocs,
      onSealed: this.sealedHandler(() => compact),
      gate: this.gate,
    });
    return compact;
  }

  /** Persists a new base of the index `compact()` once it is the one served. */
  private sealedHandler(compact: () => CompactIndex | undefined): (sealed: SealedIndex) => void {
    return (sealed) => {
      const m = compact();
      if (!m) return;
      if (m === this.served) {
        this.segments?.save(sealed, SEGMENT_KEY);
        this.onMerged?.();
      } else this.sealedAside.set(m, sealed);
    };
  }

  /** Swaps in a built index, and persists its base. */
  private swapIn(
    compact: CompactIndex,
    docs: Map<string, Item>,
    attrs: DocAttributeTable,
    pending?: Item[],
    pendingByDoc?: Array<Item | undefined>,
  ): void {
    this.served = compact;
    this.docs = docs;
    this.attrs = attrs;
    this.docsDeleted = 0;
    this.pendingItems = pending;
    this.pendingByDoc = pendingByDoc;
    this.pendingAt = 0;
    const sealed = this.sealedAside.get(compact);
    this.sealedAside.delete(compact);
    if (sealed) this.segments?.save(sealed, SEGMENT_KEY);
  }

  /** Settles once background merges are done and the segments they made are written (tests, benchmarks). */
  async settled(): Promise<void> {
    await this.writing;
    await this.filling;
    await this.served.merged();
    await this.segments?.flush();
  }

  /**
   * Merges what was appended or deleted since the last merge now, as the idle checkpoint does (in
   * the background merge's slices, persisted with segments), and settles once the new base is
   * served and written (benchmarks: the merge after a large delete, and the memory it returns).
   */
  async checkpoint(): Promise<void> {
    await this.writing;
    await this.served.merged();
    await this.gate.quiet();
    this.served.checkpoint();
    await this.settled();
  }

  /** Where the index served since the start came from; undefined before the first `replaceAll` ends. */
  get startedFrom(): IndexOrigin | undefined {
    return this.origin;
  }

  /**
   * On a graceful stop, after the server stopped taking requests: waits for the writes under
   * way, merges what was appended or deleted since the last merge (the idle checkpoint's merge,
   * in the same slices) and writes the segment, within `budgetMs`. Out of time, the segment store
   * is abandoned (`SegmentStore.abandon`): the file keeps the last segment written whole, which
   * the next start checks and brings up to date from the content as at every start. A budget of
   * 0 or less starts nothing. Arms no idle checkpoint afterwards.
   */
  async persistBeforeExit(budgetMs: number): Promise<ExitPersist> {
    const started = performance.now();
    const segments = this.segments;
    this.stopping = true;
    clearTimeout(this.checkpointTimer);
    const appended = this.served.unmergedDocs;
    const result = (outcome: ExitPersist['outcome']): ExitPersist => ({
      outcome,
      documents: this.served.documentCount,
      appended,
      ms: Math.round(performance.now() - started),
    });
    if (!segments) return result('off');
    if (budgetMs <= 0) {
      segments.abandon();
      return result('timed-out');
    }
    const writesBefore = segments.writeCount;
    const work = (async () => {
      for (;;) {
        const writing = this.writing;
        await writing;
        await this.served.merged();
        // A write that came meanwhile (a request past the drain) goes in first.
        if (this.writing !== writing) continue;
        if (!this.served.unmerged) break;
        await this.gate.quiet();
        this.served.checkpoint();
      }
      await segments.flush();
      return 'done' as const;
    })();
    let timer: NodeJS.Timeout | undefined;
    const outOfTime = new Promise<'timed-out'>((resolve) => {
      timer = setTimeout(() => resolve('timed-out'), budgetMs);
    });
    try {
      if ((await Promise.race([work, outOfTime])) === 'timed-out') {
        segments.abandon();
        return result('timed-out');
      }
    } finally {
      clearTimeout(timer);
    }
    if (!segments.current) return result('failed');
    return result(segments.writeCount > writesBefore ? 'persisted' : 'current');
  }

  /**
   * The index of `items` from the persisted segment, if there is a usable one: its documents
   * whose fingerprint still matches are taken as they are, the others re-indexed from `items`,
   * documents no longer in `items` deleted. Undefined (logged) when there is none, it is
   * unusable, or too much changed since it was written.
   */
  private async restore(
    items: readonly Item[],
    slicer: TimeSlicer,
  ): Promise<
    | {
        compact: CompactIndex;
        docs: Map<string, Item>;
        attrs: DocAttributeTable;
        unchanged: Item[];
        byDoc: Array<Item | undefined>;
        replayed: boolean;
        reindexed: number;
      }
    | undefined
  > {
    const store = this.segments!;
    const started = performance.now();
    const loaded = await store.read(SEGMENT_KEY);
    if (!loaded) return undefined;
    const ref: { compact?: CompactIndex } = {};
    let compact: CompactIndex;
    try {
      compact = await CompactIndex.restore(loaded.sealed, {
        positions: POSITIONS_FIELD,
        sliceMs: this.indexSliceMs,
        minMergeDocs: this.minMergeDocs,
        onSealed: this.sealedHandler(() => ref.compact),
        gate: this.gate,
      });
    } catch (e) {
      store.logger.warn(
        { file: store.file, reason: (e as Error).message },
        `persisted search segment not used (${(e as Error).message}): building the index from the content`,
      );
      return undefined;
    }
    ref.compact = compact;
    const n = loaded.sealed.ids.length;
    const seen = new Uint8Array(n);
    const docs = new Map<string, Item>();
    // The re-indexed documents' attributes; the others' are entered at their first read (`attributeRow`).
    const attrs = new DocAttributeTable(this.tags);
    const changed: Item[] = [];
    // They go into `docs` after the start (`fillItems`) or at their first use.
    const unchanged: Item[] = [];
    const byDoc = new Array<Item | undefined>(n);
    const sealedIds = loaded.sealed.ids;
    for (let i = 0, next = 0; i < items.length; i++) {
      if ((i & 1023) === 1023) await slicer.maybeYield();
      const item = items[i];
      // The store mostly lists items in the order they were indexed: try the next id first.
      const d = next < n && sealedIds.get(next) === item.id ? next : compact.shortId(item.id);
      if (d !== undefined) next = d + 1;
      if (d !== undefined && !seen[d] && compact.fingerprint(d) === itemFingerprint(item)) {
        unchanged.push(item);
        byDoc[d] = item;
      } else changed.push(item);
      if (d !== undefined) seen[d] = 1;
    }
    const removed: string[] = [];
    for (let d = 0; d < n; d++) if (!seen[d]) removed.push(sealedIds.get(d));
    const info = {
      file: store.file,
      bytes: loaded.bytes,
      documents: n,
      changed: changed.length,
      removed: removed.length,
    };
    if (changed.length + removed.length > REPLAY_LIMIT * Math.max(n, items.length)) {
      store.logger.info(info, 'persisted search segment is too far behind the content: rebuilding the index');
      return undefined;
    }
    for (const id of removed) compact.discard(id);
    for (const item of changed) {
      await slicer.maybeYield();
      const a = await this.analyse(item, slicer);
      compact.discard(item.id);
      docs.set(item.id, item);
      attrs.enter(compact.add(item.id, a.fields, a.fingerprint), item);
    }
    store.logger.info(
      { ...info, ms: Math.round(performance.now() - started) },
      'search index loaded from the persisted segment; changed items re-indexed',
    );
    // Persist what was re-indexed (a merge in the background), so the next start has nothing to redo.
    const replayed = changed.length + removed.length > 0;
    if (replayed) compact.checkpoint();
    return { compact, docs, attrs, unchanged, byDoc, replayed, reindexed: changed.length };
  }

  /** `docs`, with every restored document's item in it (those not entered yet go in now). */
  private allDocs(): Map<string, Item> {
    const pending = this.pendingItems;
    if (pending) {
      for (let i = this.pendingAt; i < pending.length; i++) this.enterItem(pending[i]);
      this.pendingItems = undefined;
      this.pendingByDoc = undefined;
    }
    return this.docs;
  }

  /**
   * Enters a restored item in `docs`, unless a write since the restore replaced it (its new
   * version is in `docs`) or removed it (no longer indexed).
   */
  private enterItem(item: Item): void {
    if (!this.docs.has(item.id) && this.served.has(item.id)) this.docs.set(item.id, item);
  }

  /**
   * The item indexed as `id`, short id `doc` (what its snippet is cut from). While the restored
   * documents' items are still being entered (`fillItems`), a restored one is found by its short
   * id instead of entering all the rest first (at 1M documents that was a 2 s step in the first
   * query after a start). A write sets its own documents' items in `docs`, so an item under its
   * short id is the document's unless a merge renumbered them since, hence the check of the id.
   */
  item(id: string, doc: number): Item | undefined {
    const known = this.docs.get(id);
    if (known || !this.pendingItems) return known;
    const item = this.pendingByDoc?.[doc];
    if (item?.id === id) return item;
    return this.allDocs().get(id);
  }

  /**
   * At the first write after a restore (a write looks documents up by id): enters the rest of a
   * restored base's ids into the index's id map (`CompactIndex.fillIds`), in slices, and starts
   * entering its documents' items into `docs` (`fillItems`) in the background. Writes set and delete
   * their own documents' items meanwhile (`enterItem` leaves those alone); the merges that
   * follow writes renumber documents, after which `item` no longer finds a restored item by its
   * short id (it finds it in `docs` once entered).
   */
  private async enterRestored(): Promise<void> {
    if (this.served.idsPending > 0) await this.served.fillIds(this.indexSliceMs);
    if (this.pendingItems && !this.filling) {
      const filling = (this.filling = this.fillItems(this.indexSliceMs).finally(() => {
        if (this.filling === filling) this.filling = undefined;
      }));
    }
  }

  /** Whether the restored documents' items are not all entered in `docs` yet (tests). */
  get metadataPending(): boolean {
    return this.pendingItems !== undefined;
  }

  /** Enters the restored documents' items in slices of about `sliceMs` (after the start). */
  private async fillItems(sliceMs: number): Promise<void> {
    const slicer = new TimeSlicer(sliceMs);
    const pending = this.pendingItems;
    while (pending && this.pendingItems === pending && this.pendingAt < pending.length) {
      const i = this.pendingAt++;
      this.enterItem(pending[i]);
      if ((i & 1023) === 1023) await slicer.maybeYield();
    }
    if (pending && this.pendingItems === pending) {
      this.pendingItems = undefined;
      this.pendingByDoc = undefined;
    }
  }

  /**
   * The analysed terms of `item` per field of `FIELDS` (`text` is title, summary, tags and body;
   * each text is analysed once). A very large body is made plain (unless its plain text is kept
   * on the item) and analysed in slices through `slicer`, so indexing it never holds the event
   * loop for long.
   */
  private async analyse(item: Item, slicer: TimeSlicer): Promise<Analysed> {
    // The body's plain text as the ingest or the store kept it on the item, else made now and not
    // kept (a snippet makes it again, for the hit shown); a large body's a pass at a time, and
    // kept, so that a snippet of it does not make it again in one step.
    const body =
      item.body.length < LARGE_TEXT
        ? plainTextOf(item, { keep: false })
        : await plainTextOfInSteps(item, () => slicer.maybeYield());
    const summary = item.summary ?? '';
    const a = this.analyzer;
    const title = a.analyze(item.title);
    const tags = a.analyze(item.tags.join(' '));
    const bodyTerms =
      body.length < LARGE_TEXT ? a.analyze(body) : await a.analyzeInSlices(body, () => slicer.maybeYield());
    const text = [...title, ...a.analyze(summary), ...tags, ...bodyTerms];
    return { fields: [title, tags, text], fingerprint: itemFingerprint(item) };
  }

  private serial(write: () => Promise<void>): Promise<void> {
    const done = this.writing.then(write);
    this.writing = done.catch(() => undefined);
    void done.then(
      () => this.armCheckpoint(),
      () => undefined,
    );
    return done;
  }

  /** (Re)starts the idle timer after which what was written since the last merge is merged and persisted. */
  private armCheckpoint(): void {
    if (!this.segments || this.checkpointIdleMs <= 0 || this.stopping) return;
    clearTimeout(this.checkpointTimer);
    this.checkpointTimer = setTimeout(
      () => void this.gate.quiet().then(() => this.served.checkpoint()),
      this.checkpointIdleMs,
    );
    this.checkpointTimer.unref();
  }

  /**
   * Adds or replaces items, one at a time, yielding to the event loop between slices (and within
   * a very large item); an item's old version is served until its new one is indexed whole.
   */
  upsert(items: readonly Item[]): Promise<void> {
    return this.serial(async () => {
      const slicer = new TimeSlicer(this.indexSliceMs);
      // Not in the turn the write was called or the previous one ended in.
      await slicer.begin();
      await this.enterRestored();
      for (const item of items) {
        await slicer.maybeYield();
        const a = await this.analyse(item, slicer);
        if (await this.gate.quiet()) slicer.restart();
        this.served.discard(item.id);
        this.docs.set(item.id, item);
        this.attrs.enter(this.served.add(item.id, a.fields, a.fingerprint), item);
      }
    });
  }

  /**
   * Removes items by id (unknown ids are ignored), without a rebuild: their postings become
   * tombstones, dropped at the index's next segment merge. In slices, as `upsert`: a delete of
   * 100,000 of 1M documents (a `delete_where`) is some hundreds of ms of work, and queries are
   * answered between slices, each against one state of the index (an item is gone or not).
   */
  remove(ids: readonly string[]): Promise<void> {
    return this.serial(async () => {
      const slicer = new TimeSlicer(this.indexSliceMs);
      await slicer.begin();
      await this.enterRestored();
      for (const id of ids) {
        await slicer.maybeYield();
        if (await this.gate.quiet()) slicer.restart();
        if (this.served.discard(id) && this.docs.delete(id)) this.docsDeleted += 1;
      }
      if (this.docsDeleted > this.docs.size && !this.pendingItems) await this.compactDocs(slicer);
    });
  }

  /**
   * Copies `docs` into a map of its size, in slices: a `Map` keeps its table when entries are
   * deleted, so after half a million of 1M documents were removed the map of items still took the
   * room of 1M (~40 B a live document at 1M, measured by bench/search/delete.ts). Run inside a
   * write, once more entries were deleted than remain; queries read the old map until the swap.
   * Not while restored items are being entered (`fillItems` writes into the map).
   */
  private async compactDocs(slicer: TimeSlicer): Promise<void> {
    const old = this.docs;
    const docs = new Map<string, Item>();
    let n = 0;
    for (const [id, item] of old) {
      docs.set(id, item);
      if ((++n & 1023) === 0) await slicer.maybeYield();
    }
    if (this.docs !== old || this.pendingItems) return;
    this.docs = docs;
    this.docsDeleted = 0;
  }

  /**
   * Builds a new index in slices (searches meanwhile see the old one whole), then swaps it in:
   * items are analysed into the forward index, then the postings are filled in one pass, also
   * in slices. Settles with where the index swapped in came from (`segment`: restored).
   */
  async replaceAll(items: readonly Item[]): Promise<IndexOrigin['from']> {
    let from: IndexOrigin['from'] = 'content';
    await this.serial(async () => {
      const slicer = new TimeSlicer(this.indexSliceMs);
      if (this.segments && !this.segmentTried) {
        this.segmentTried = true;
        const restored = await this.restore(items, slicer);
        if (restored) {
          from = 'segment';
          const { compact } = restored;
          // The vocabulary's look-up structures before ready, in slices (~50–100 ms of CPU at
          // 200,000 documents, 49k terms): built after ready, a prefix or fuzzy look-up in the
          // first few hundred ms scanned every term (a few ms a term).
          await compact.fillVocabulary(this.indexSliceMs);
          await this.gate.quiet();
          this.swapIn(compact, restored.docs, restored.attrs, restored.unchanged, restored.byDoc);
          this.origin = { from: 'segment', documents: compact.documentCount, reindexed: restored.reindexed };
          // The id map is filled in the background (writes need it; queries look nothing up by
          // id). Queries find a restored document's item by its short id (`item`,
          // `attributes`): it is entered from the first write on (`enterRestored`), not after
          // ready, where entering it (a million objects at 1M) took ~7% of the first 10 s of
          // queries' CPU. Unless the restore re-indexed items: its merge (`checkpoint`)
          // renumbers the documents, so it is entered now, as before.
          const ids = compact.fillIds(this.indexSliceMs);
          if (restored.replayed) void ids.then(() => this.enterRestored());
          return;
        }
      }
      const docs = new Map<string, Item>();
      const attrs = new DocAttributeTable(this.tags);
      const compact = this.create();
      for (const item of items) {
        await slicer.maybeYield();
        const a = await this.analyse(item, slicer);
        docs.set(item.id, item);
        attrs.enter(compact.load(item.id, a.fields, a.fingerprint), item);
      }
      await compact.sealInSlices(this.indexSliceMs);
      await this.gate.quiet();
      this.swapIn(compact, docs, attrs);
      this.origin ??= { from: 'content', documents: compact.documentCount, reindexed: items.length };
      void compact.fillVocabulary(this.indexSliceMs);
    });
    return from;
  }

  /** The served index's documents' attributes, by the rows `attributeRow` gives (`ColumnSource`). */
  get attributes(): DocAttributeTable {
    return this.attrs;
  }

  /**
   * Document `doc`'s row in `attributes` (its slot in the index served: merges leave it as it is),
   * -1 once the document is deleted. Every document is entered there when it is indexed, except
   * the documents of a restored segment whose items were unchanged: theirs is entered here, at the
   * first read, from the item (`item`: found by its short id, so that the columns' first build
   * does not enter every restored item in `docs` first; a lazy item answers its type, tags and
   * dates without being parsed). Entering them at the restore would add a pass over the items to
   * the start, before readiness; the first build after it runs in the background.
   */
  attributeRow(doc: number): number {
    const compact = this.served;
    const row = compact.slotOf(doc);
    if (row < 0 || this.attrs.entered(row)) return row;
    const item = this.item(compact.externalId(doc), doc);
    if (!item) return -1;
    this.attrs.enter(row, item);
    return row;
  }
}
