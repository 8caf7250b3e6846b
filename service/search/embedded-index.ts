import { crc32 } from 'node:zlib';
import type { Item, ItemType } from '../content/item';
import { plainText, plainTextOf, plainTextOfInSteps } from '../content/plain-text';
import { Analyzer } from './analysis/analyzer';
import { rm3Weights, type TermVector } from './query/expansion';
import { DEFAULT_RANKING, type IndexedField, type RankingOptions } from './ranking';
import { QUERY_LIMITS, bestExpansions, distinctTerms, type WeightedTerm } from './query/query-plan';
import type { IndexHit, IndexPage, IndexQuery, SearchIndex } from './search-index';
import { buildSnippet, leadSnippet } from './analysis/snippet';
import { itemFingerprint } from '../content/item-fingerprint';
import { inSlices, TimeSlicer } from '../lib/yield-to-loop';
import { accumulatedTopK } from './scoring/accumulated-top-k';
import { boundedTopK } from './scoring/bounded-top-k';
import { maxScoreTopK } from './scoring/max-score';
import { TopKScratch } from './scoring/top-k-scratch';
import { QueryGate } from './query-gate';
import { WINDOW_POSTINGS, WindowPace, windowedTopK } from './scoring/windowed-top-k';
import { CompactIndex, type SealedIndex } from './index/compact-index';
import type { SegmentStore } from './index/segment-store';
import type { DocHit } from './scoring/top-hits';
import { proximityRerank } from './scoring/proximity';

/** Options of `EmbeddedIndex`; nested objects replace the defaults' whole. */
export type EmbeddedIndexOptions = Partial<RankingOptions> & {
  /** Longest snippet, characters. @default 200 */
  readonly snippetChars?: number;
  /**
   * Indexing yields to the event loop after about this long, milliseconds: a large batch is
   * indexed in slices, between which searches and health probes are answered. @default 10
   */
  readonly indexSliceMs?: number;
  /**
   * Where the built base segment is persisted and, at the first `replaceAll`, read back from
   * (instead of analysing every item; only the items that changed since are re-indexed).
   * @default none: every start builds the index
   */
  readonly segments?: SegmentStore;
  /**
   * With `segments`: once writes have paused this long, milliseconds, merge what was appended
   * since the last merge (in the background) so that the persisted segment covers everything
   * and a restart re-indexes nothing. 0 = only at merges. @default 30000
   */
  readonly checkpointIdleMs?: number;
  /** `CompactIndexOptions.minMergeDocs` (small in tests, to merge often). @default 1024 */
  readonly minMergeDocs?: number;
  /**
   * A query yields to the event loop after about this long, milliseconds: between one term's
   * postings and the next, between windows of documents (`windowedTopK`), between snippets.
   * Writes wait for the query under way (`QueryGate`), so it reads one state throughout. @default 5
   */
  readonly querySliceMs?: number;
  /**
   * Postings of a window of `windowedTopK` at least (small in tests); windows are sized to score
   * in about `querySliceMs` at the scorer's last pace. @default WINDOW_POSTINGS
   */
  readonly windowPostings?: number;
};

/**
 * Indexes of at most this many documents score both passes of long queries with `boundedTopK`,
 * larger ones the first pass with `maxScoreTopK` (the same pages; speed only, measured at 200k
 * and 1M: see BENCHMARKS.md).
 */
const BOUNDED_TOPK_DOCS = 300_000;

// The fields of `CompactIndex`, in the order their scores are summed (MiniSearch's field order before).
const FIELDS: readonly IndexedField[] = ['title', 'tags', 'text'];
const NO_TAGS: readonly string[] = [];
// The field whose token positions are kept, for proximity (`proximity.ts`): `text` holds every term.
const POSITIONS_FIELD: IndexedField = 'text';

interface DocMeta {
  readonly type: ItemType;
  /** Lower-cased. */
  readonly tags: readonly string[];
  /** The body as plain text once `plain`; until then as stored (markdown), made plain at its first snippet. */
  body: string;
  plain: boolean;
  readonly summary: string;
}

const lowerTags = (tags: readonly string[]): readonly string[] => (tags.length ? tags.map((t) => t.toLowerCase()) : NO_TAGS);

/**
 * The metadata of a document taken from a persisted segment: read from its item when first
 * needed, so that a start does not read every item (a store may parse items lazily).
 */
class RestoredMeta implements DocMeta {
  plain = false;
  private lowered: readonly string[] | undefined;
  private text: string | undefined;
  constructor(
    readonly type: ItemType,
    private readonly item: Item,
  ) {}
  get tags(): readonly string[] {
    return (this.lowered ??= lowerTags(this.item.tags));
  }
  get body(): string {
    return this.text ?? this.item.body;
  }
  set body(text: string) {
    this.text = text;
  }
  get summary(): string {
    return this.item.summary ?? '';
  }
}

/** An item analysed: its terms per field of `FIELDS` and its metadata, not yet in the index. */
interface Analysed {
  readonly fields: string[][];
  readonly meta: DocMeta;
  readonly fingerprint: number;
}

// Bodies at least this long are made plain and analysed in slices (yielding to the event loop between them).
const LARGE_TEXT = 32_768;


/**
 * What a persisted segment's terms were made with: the fields, and the analyser's output on a
 * probe text (stopwords, folding, stemming, numbers); a segment made otherwise is not loaded.
 */
export const SEGMENT_KEY = (() => {
  const probe = "The measurements of lasers' beams: naïve cafés, 42 runners running, l'été, résumé; a x ions-99 COHERENTLY";
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


/**
 * What one query scores, bounded by `QUERY_LIMITS` whatever its text: its distinct terms
 * weighted by how often they occur and, for a short query, the prefix and fuzzy expansions of
 * each.
 */
export interface QueryPlan {
  /** The query's terms (stopwords gone, stemmed), repeats kept, cut to the first `maxTerms` distinct ones. */
  readonly terms: string[];
  /** At most `shortQueryTerms` distinct terms: prefix and fuzzy matching instead of RM3. */
  readonly short: boolean;
  /** Weighted index terms of the first pass: distinct query terms, then expansions. */
  readonly scored: WeightedTerm[];
  /** Per distinct query term, the index terms it stands for (itself first); for coordination. */
  readonly groups: ReadonlyArray<readonly string[]>;
}

/**
 * One original query term's weight in the final pass, the unit of proximity's features: RM3's
 * λ over the query's length when the query was expanded, else 1 over it (as the sweep has it).
 */
export function proximityUnit(r: RankingOptions, expanded: boolean, terms: readonly string[]): number {
  return (expanded ? r.expansion.originalWeight : 1) / terms.length;
}

/** Keeps a document (its id, its short id) or not (type and tag filters). */
export type Keep = (id: string, doc: number) => boolean;


/**
 * The embedded index over title, summary, tags and the plain text of the body, with Porter2
 * stemming and English stopwords (`Analyzer`), field boosts, prefix and fuzzy matching for short
 * queries, RM3 query expansion, and highlighted snippets. Postings, term vectors and the
 * vocabulary live in `CompactIndex` (typed arrays in segments; MiniSearch's BM25 formula, and
 * its radix tree's prefix and fuzzy answers from typed arrays: `Vocabulary`), every query is scored by dynamic
 * pruning over them (`accumulatedTopK`, `boundedTopK` or `maxScoreTopK`: see `runPruned`) with its work bounded by `QUERY_LIMITS` (see `plan`), and only the requested page is
 * given snippets. Holds everything in memory: fine to a few hundred thousand items on one node.
 */
export class EmbeddedIndex implements SearchIndex {
  /** For logs only (`content loaded and indexed`); no API answer, metric or health field carries it. */
  readonly engine = 'embedded';
  readonly ranking: RankingOptions;
  readonly analyzer = new Analyzer();
  protected compact: CompactIndex;
  private docs = new Map<string, DocMeta>();
  /** Items of documents restored from a segment whose metadata is not in `docs` yet (`metaDocs`). */
  private pendingMeta: Item[] | undefined;
  /** The same items by their short id at the restore, while `pendingMeta` is pending (`meta`). */
  private pendingByDoc: Array<Item | undefined> | undefined;
  private pendingAt = 0;
  /** `fillMeta` under way, started by a write (`enterRestored`). */
  private filling: Promise<void> | undefined;
  private readonly snippetChars: number;
  private readonly indexSliceMs: number;
  private readonly segments: SegmentStore | undefined;
  private readonly checkpointIdleMs: number;
  private readonly minMergeDocs: number | undefined;
  private readonly querySliceMs: number;
  private readonly windowPostings: number;
  // The scorers' pace in their last window (`windowedTopK`), across queries.
  private readonly windowPace = new WindowPace();
  // The accumulator scorers' arrays, reused by every query (a scorer runs to its end in one call).
  private readonly scratch = new TopKScratch();
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
  // Queries run in slices, one at a time; writes wait for the one under way (`QueryGate`).
  private readonly gate = new QueryGate();

  constructor(opts: EmbeddedIndexOptions = {}) {
    const { snippetChars, indexSliceMs, segments, checkpointIdleMs, minMergeDocs, querySliceMs, windowPostings, ...ranking } = opts;
    this.querySliceMs = querySliceMs ?? 5;
    this.windowPostings = windowPostings ?? WINDOW_POSTINGS;
    this.minMergeDocs = minMergeDocs;
    this.segments = segments;
    this.checkpointIdleMs = checkpointIdleMs ?? 30_000;
    this.ranking = { ...DEFAULT_RANKING, ...ranking };
    this.snippetChars = snippetChars ?? 200;
    this.indexSliceMs = indexSliceMs ?? 10;
    this.compact = this.create();
  }

  private create(): CompactIndex {
    const compact: CompactIndex = new CompactIndex(FIELDS, { positions: POSITIONS_FIELD, minMergeDocs: this.minMergeDocs, onSealed: this.sealedHandler(() => compact), gate: this.gate });
    return compact;
  }

  /** Persists a new base of the index `compact()` once it is the one served. */
  private sealedHandler(compact: () => CompactIndex | undefined): (sealed: SealedIndex) => void {
    return (sealed) => {
      const m = compact();
      if (!m) return;
      if (m === this.compact) this.segments?.save(sealed, SEGMENT_KEY);
      else this.sealedAside.set(m, sealed);
    };
  }

  /** Swaps in a built index, and persists its base. */
  private swapIn(compact: CompactIndex, docs: Map<string, DocMeta>, pending?: Item[], pendingByDoc?: Array<Item | undefined>): void {
    this.compact = compact;
    this.docs = docs;
    this.pendingMeta = pending;
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
    await this.compact.merged();
    await this.segments?.flush();
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
    const appended = this.compact.unmergedDocs;
    const result = (outcome: ExitPersist['outcome']): ExitPersist => ({ outcome, documents: this.compact.documentCount, appended, ms: Math.round(performance.now() - started) });
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
        await this.compact.merged();
        // A write that came meanwhile (a request past the drain) goes in first.
        if (this.writing !== writing) continue;
        if (!this.compact.unmerged) break;
        await this.gate.quiet();
        this.compact.checkpoint();
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
  ): Promise<{ compact: CompactIndex; docs: Map<string, DocMeta>; unchanged: Item[]; byDoc: Array<Item | undefined>; replayed: boolean; reindexed: number } | undefined> {
    const store = this.segments!;
    const started = performance.now();
    const loaded = await store.read(SEGMENT_KEY);
    if (!loaded) return undefined;
    const ref: { compact?: CompactIndex } = {};
    let compact: CompactIndex;
    try {
      compact = await CompactIndex.restore(loaded.sealed, { positions: POSITIONS_FIELD, sliceMs: this.indexSliceMs, minMergeDocs: this.minMergeDocs, onSealed: this.sealedHandler(() => ref.compact), gate: this.gate });
    } catch (e) {
      store.logger.warn({ file: store.file, reason: (e as Error).message }, `persisted search segment not used (${(e as Error).message}): building the index from the content`);
      return undefined;
    }
    ref.compact = compact;
    const n = loaded.sealed.ids.length;
    const seen = new Uint8Array(n);
    const docs = new Map<string, DocMeta>();
    const changed: Item[] = [];
    // Their metadata goes into `docs` after the start (`fillMeta`) or at its first use.
    const unchanged: Item[] = [];
    const byDoc = new Array<Item | undefined>(n);
    const sealedIds = loaded.sealed.ids;
    for (let i = 0, next = 0; i < items.length; i++) {
      if ((i & 1023) === 1023) await slicer.maybeYield();
      const item = items[i];
      // The store mostly lists items in the order they were indexed: try the next id first.
      const d = next < n && sealedIds[next] === item.id ? next : compact.shortId(item.id);
      if (d !== undefined) next = d + 1;
      if (d !== undefined && !seen[d] && compact.fingerprint(d) === itemFingerprint(item)) {
        unchanged.push(item);
        byDoc[d] = item;
      } else changed.push(item);
      if (d !== undefined) seen[d] = 1;
    }
    const removed: string[] = [];
    for (let d = 0; d < n; d++) if (!seen[d]) removed.push(loaded.sealed.ids[d]);
    const info = { file: store.file, bytes: loaded.bytes, documents: n, changed: changed.length, removed: removed.length };
    if (changed.length + removed.length > REPLAY_LIMIT * Math.max(n, items.length)) {
      store.logger.info(info, 'persisted search segment is too far behind the content: rebuilding the index');
      return undefined;
    }
    for (const id of removed) compact.discard(id);
    for (const item of changed) {
      await slicer.maybeYield();
      const a = await this.analyse(item, slicer);
      compact.discard(item.id);
      docs.set(item.id, a.meta);
      compact.add(item.id, a.fields, a.fingerprint);
    }
    store.logger.info({ ...info, ms: Math.round(performance.now() - started) }, 'search index loaded from the persisted segment; changed items re-indexed');
    // Persist what was re-indexed (a merge in the background), so the next start has nothing to redo.
    const replayed = changed.length + removed.length > 0;
    if (replayed) compact.checkpoint();
    return { compact, docs, unchanged, byDoc, replayed, reindexed: changed.length };
  }

  /** `docs`, with the metadata of every restored document in it (those not entered yet go in now). */
  private metaDocs(): Map<string, DocMeta> {
    const pending = this.pendingMeta;
    if (pending) {
      for (let i = this.pendingAt; i < pending.length; i++) this.enterMeta(pending[i]);
      this.pendingMeta = undefined;
      this.pendingByDoc = undefined;
    }
    return this.docs;
  }

  /**
   * Enters a restored item's metadata in `docs`, unless a write since the restore replaced it
   * (its metadata is in `docs`) or removed it (no longer indexed).
   */
  private enterMeta(item: Item): void {
    if (!this.docs.has(item.id) && this.compact.has(item.id)) this.docs.set(item.id, new RestoredMeta(item.type, item));
  }

  /**
   * The metadata of `id`, short id `doc`. While the restored documents' metadata is still being
   * entered (`fillMeta`), a restored one is made from its item, found by its short id, instead of
   * entering all the rest first (at 1M documents that was a 2 s step in the first query after a
   * start). A write sets its own documents' metadata in `docs`, so an item under its short id is
   * the document's unless a merge renumbered them since, hence the check of the id.
   */
  private meta(id: string, doc: number): DocMeta | undefined {
    const known = this.docs.get(id);
    if (known || !this.pendingMeta) return known;
    const item = this.pendingByDoc?.[doc];
    if (item?.id === id) return new RestoredMeta(item.type, item);
    return this.metaDocs().get(id);
  }

  /**
   * At the first write after a restore (a write looks documents up by id): enters the rest of a
   * restored base's ids into the index's id map (`CompactIndex.fillIds`), in slices, and starts
   * entering its documents' metadata into `docs` (`fillMeta`) in the background. Writes set and delete
   * their own documents' metadata meanwhile (`enterMeta` leaves those alone); the merges that
   * follow writes renumber documents, after which `meta` no longer finds a restored item by its
   * short id (it finds it in `docs` once entered).
   */
  private async enterRestored(): Promise<void> {
    if (this.compact.idsPending > 0) await this.compact.fillIds(this.indexSliceMs);
    if (this.pendingMeta && !this.filling) {
      const filling = (this.filling = this.fillMeta(this.indexSliceMs).finally(() => {
        if (this.filling === filling) this.filling = undefined;
      }));
    }
  }

  /** Whether the restored documents' metadata is not all entered in `docs` yet (tests). */
  get metadataPending(): boolean {
    return this.pendingMeta !== undefined;
  }

  /** Enters the restored documents' metadata in slices of about `sliceMs` (after the start). */
  private async fillMeta(sliceMs: number): Promise<void> {
    const slicer = new TimeSlicer(sliceMs);
    const pending = this.pendingMeta;
    while (pending && this.pendingMeta === pending && this.pendingAt < pending.length) {
      const i = this.pendingAt++;
      this.enterMeta(pending[i]);
      if ((i & 1023) === 1023) await slicer.maybeYield();
    }
    if (pending && this.pendingMeta === pending) {
      this.pendingMeta = undefined;
      this.pendingByDoc = undefined;
    }
  }

  /**
   * The analysed terms of `item` per field of `FIELDS` (`text` is title, summary, tags and body;
   * each text is analysed once) and its metadata. A very large body is made plain (unless its
   * plain text is kept on the item) and analysed in slices through `slicer`, so indexing it never
   * holds the event loop for long.
   */
  private async analyse(item: Item, slicer: TimeSlicer): Promise<Analysed> {
    // A large body's plain text (unless the ingest kept it on the item) a pass at a time too.
    const body = item.body.length < LARGE_TEXT ? plainTextOf(item) : await plainTextOfInSteps(item, () => slicer.maybeYield());
    const summary = item.summary ?? '';
    const a = this.analyzer;
    const title = a.analyze(item.title);
    const tags = a.analyze(item.tags.join(' '));
    const bodyTerms = body.length < LARGE_TEXT ? a.analyze(body) : await a.analyzeInSlices(body, () => slicer.maybeYield());
    const text = [...title, ...a.analyze(summary), ...tags, ...bodyTerms];
    const meta: DocMeta = { type: item.type, tags: lowerTags(item.tags), body, plain: true, summary };
    return { fields: [title, tags, text], meta, fingerprint: itemFingerprint(item) };
  }

  /** The term vector of an indexed document (RM3's feedback), read from the forward index. */
  protected vector(doc: number): TermVector {
    return { tf: this.compact.fieldTerms(doc, 'text'), length: this.compact.fieldLength(doc, 'text') };
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
    this.checkpointTimer = setTimeout(() => void this.gate.quiet().then(() => this.compact.checkpoint()), this.checkpointIdleMs);
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
        this.compact.discard(item.id);
        this.docs.set(item.id, a.meta);
        this.compact.add(item.id, a.fields, a.fingerprint);
      }
    });
  }

  /**
   * Removes items by id (unknown ids are ignored), without a rebuild: their postings become
   * tombstones, dropped at the index's next segment merge.
   */
  remove(ids: readonly string[]): Promise<void> {
    return this.serial(async () => {
      await this.enterRestored();
      await this.gate.quiet();
      for (const id of ids) {
        if (this.compact.discard(id)) this.docs.delete(id);
      }
    });
  }

  /**
   * Builds a new index in slices (searches meanwhile see the old one whole), then swaps it in:
   * items are analysed into the forward index, then the postings are filled in one pass, also
   * in slices.
   */
  replaceAll(items: readonly Item[]): Promise<void> {
    return this.serial(async () => {
      const slicer = new TimeSlicer(this.indexSliceMs);
      if (this.segments && !this.segmentTried) {
        this.segmentTried = true;
        const restored = await this.restore(items, slicer);
        if (restored) {
          const { compact } = restored;
          // The vocabulary's look-up structures before ready, in slices (~50–100 ms of CPU at
          // 200,000 documents, 49k terms): built after ready, a prefix or fuzzy look-up in the
          // first few hundred ms scanned every term (a few ms a term).
          await compact.fillVocabulary(this.indexSliceMs);
          await this.gate.quiet();
          this.swapIn(compact, restored.docs, restored.unchanged, restored.byDoc);
          this.origin = { from: 'segment', documents: compact.documentCount, reindexed: restored.reindexed };
          // The id map is filled in the background (writes need it; queries look nothing up by
          // id). Queries find a restored document's metadata by its short id (`meta`,
          // `filterFor`): it is entered from the first write on (`enterRestored`), not after
          // ready, where entering it (a million objects at 1M) took ~7% of the first 10 s of
          // queries' CPU. Unless the restore re-indexed items: its merge (`checkpoint`)
          // renumbers the documents, so it is entered now, as before.
          const ids = compact.fillIds(this.indexSliceMs);
          if (restored.replayed) void ids.then(() => this.enterRestored());
          return;
        }
      }
      const docs = new Map<string, DocMeta>();
      const compact = this.create();
      for (const item of items) {
        await slicer.maybeYield();
        const a = await this.analyse(item, slicer);
        docs.set(item.id, a.meta);
        compact.load(item.id, a.fields, a.fingerprint);
      }
      await compact.sealInSlices(this.indexSliceMs);
      await this.gate.quiet();
      this.swapIn(compact, docs);
      this.origin ??= { from: 'content', documents: compact.documentCount, reindexed: items.length };
      void compact.fillVocabulary(this.indexSliceMs);
    });
  }

  size(): number {
    return this.compact.documentCount;
  }

  /** Terms the vocabulary's look-up structures do not cover yet (tests: none right after a restore). */
  get vocabularyUncovered(): number {
    return this.compact.vocabularyUncovered;
  }

  /** Query terms as the index sees them (stopwords gone, stemmed). */
  queryTerms(text: string): string[] {
    return this.analyzer.analyze(text);
  }

  /**
   * The terms `text` is scored with. A repeated term is scored once with its count as weight;
   * a short query's terms also match index terms they are a prefix of or a near spelling of
   * (MiniSearch's prefix and fuzzy search, with its weights), the closest first, capped per term
   * and per query.
   */
  plan(text: string): QueryPlan {
    const r = this.ranking;
    const L = QUERY_LIMITS;
    const { weighted, kept } = distinctTerms(this.queryTerms(text), L.maxTerms);
    const short = weighted.length > 0 && weighted.length <= r.shortQueryTerms;
    if (!short) return { terms: kept, short, scored: weighted, groups: weighted.map(([t]) => [t]) };
    const scored: WeightedTerm[] = [...weighted];
    const groups: string[][] = [];
    let budget: number = L.maxExpansions;
    for (const [term, count] of weighted) {
      const fuzzy = term.length >= r.fuzzyMinLength && term.length <= L.maxFuzzyLength ? Math.min(L.maxFuzzyDistance, Math.round(term.length * 0.2)) : 0;
      const found = this.compact.expansions(term, { prefix: term.length >= r.prefixMinLength, fuzzy, scanLimit: L.maxPrefixScan });
      const best = bestExpansions(found, Math.min(L.maxExpansionsPerTerm, budget));
      budget -= best.length;
      for (const e of best) scored.push([e.term, e.weight * count]);
      groups.push([term, ...best.map((e) => e.term)]);
    }
    return { terms: kept, short, scored, groups };
  }

  /**
   * The type and tag filter. A restored document whose metadata is not entered yet is judged
   * from its item, found by its short id (as `meta` finds it; a lazy item answers its type and
   * tags without being parsed), so a filtered query does not enter every restored document first.
   */
  protected filterFor(type?: ItemType, tag?: string): Keep | undefined {
    if (!type && !tag) return undefined;
    const t = tag?.toLowerCase();
    return (id, doc) => {
      const d = this.docs.get(id);
      if (d) return (!type || d.type === type) && (!t || d.tags.includes(t));
      const item = this.pendingMeta && this.pendingByDoc?.[doc];
      if (item && item.id === id) return (!type || item.type === type) && (!t || item.tags.some((x) => x.toLowerCase() === t));
      const m = this.pendingMeta && this.metaDocs().get(id);
      return !!m && (!type || m.type === type) && (!t || m.tags.includes(t));
    };
  }

  /** Query terms of which a document holds the term or one of its expansions (any field: `text` holds them all). */
  protected groupsMatched(doc: number, groups: ReadonlyArray<readonly string[]>): number {
    return groups.filter((g) => g.some((t) => this.compact.hasTerm(doc, 'text', t))).length;
  }

  /** The page `query` asks for (the exhaustive oracle of tools/oracles/exhaustive-index.ts gives the same). */
  search(query: IndexQuery): Promise<IndexPage> {
    return this.gate.run(() => this.searchPruned(query));
  }

  /**
   * `search` through `maxScoreTopK`: the first RM3 pass asks for the feedback documents only,
   * the last pass for the page; the total is counted from the postings without scoring them.
   * Runs in slices of about `querySliceMs` (under `gate`, so the index does not change
   * meanwhile): a query after a write, which builds its terms' postings afresh, or one over
   * long postings never holds the event loop for long.
   */
  private async searchPruned(query: IndexQuery): Promise<IndexPage> {
    const slicer = new TimeSlicer(this.querySliceMs);
    const pause = () => slicer.maybeYield();
    const plan = this.plan(query.text);
    const highlight = new Set(plan.scored.map(([t]) => t));
    if (!plan.terms.length) return { total: 0, hits: [] };
    const keep = this.filterFor(query.type, query.tag);
    const r = this.ranking;
    const k = query.offset + query.limit;
    let page: { total: number; hits: DocHit[] };
    if (plan.short) page = await this.runPruned(pause, plan.scored, keep, k, plan.groups);
    else {
      const x = r.expansion;
      const expand = x.enabled && this.compact.documentCount >= x.minDocs;
      // Proximity re-scores the exact top `depth` of the final pass: that pass asks for at least as many.
      const source = r.proximity.weight > 0 ? this.compact.proximitySource() : undefined;
      const last = source ? Math.max(k, r.proximity.depth) : k;
      // With RM3 the expanded pass reads the original terms again: their values are kept.
      page = await this.runPruned(pause, plan.scored, keep, expand ? x.fbDocs : last, undefined, !expand, undefined, expand);
      if (expand && page.hits.length > 0) {
        const feedback = page.hits.slice(0, x.fbDocs).map((h) => ({ score: h.score, vector: this.vector(h.doc) }));
        // The feedback documents hold the expanded query's terms: their scores start its pruning.
        const known = page.hits.slice(0, x.fbDocs).map((h) => h.doc);
        page = await this.runPruned(pause, [...rm3Weights(plan.terms, feedback, x)], keep, last, undefined, true, known);
      }
      if (source && page.hits.length > 0) {
        const docs = page.hits.map((h) => h.doc);
        const hits = await inSlices(proximityRerank(source, plan.terms, page.hits, docs, r.proximity, proximityUnit(r, expand, plan.terms)), slicer);
        page = { total: page.total, hits: hits.slice(0, k) };
      }
    }
    const wanted = query.snippets === false ? undefined : highlight;
    const hits: IndexHit[] = [];
    for (const h of page.hits.slice(query.offset)) {
      if (wanted) await pause();
      hits.push({ id: h.id, score: h.score, snippet: wanted ? this.snippet(h, wanted) : '' });
    }
    return { total: page.total, hits };
  }

  /**
   * The best `k` of `terms` scored over every matching document (as the exhaustive oracle,
   * tools/oracles/exhaustive-index.ts, scores them), and the number of all its matches, by dynamic pruning; `pause()` is
   * awaited between a term's postings and the next, and between windows of documents. `reread`:
   * the query reads these terms again (their values are kept at their first use: `termValues`).
   */
  private async runPruned(
    pause: () => Promise<void>,
    terms: readonly WeightedTerm[],
    keep: Keep | undefined,
    k: number,
    groups?: ReadonlyArray<readonly string[]>,
    count = true,
    known?: readonly number[],
    reread = false,
  ): Promise<{ total: number; hits: DocHit[] }> {
    const r = this.ranking;
    const compact = this.compact;
    const keepDoc = keep && ((docId: number) => keep(compact.externalId(docId), docId));
    // A short query's scorer meets every matching document: it counts them (the total) as it goes.
    const counted = groups && count && k > 0 ? { matched: 0 } : undefined;
    const job = compact.cursorJob(terms, r.boost, { k: r.bm25.k1, b: r.bm25.b, d: r.bm25.delta }, count && !counted, keepDoc, reread);
    let step = job.next();
    while (!step.done) {
      await pause();
      step = job.next();
    }
    const { cursors, total, whole } = step.value;
    const coordination = !r.coordination
      ? undefined
      : groups
        ? (docId: number) => this.groupsMatched(docId, groups)
        : (_docId: number, matched: number) => matched;
    const maxCoordination = !r.coordination ? 1 : groups ? groups.length : cursors.filter((c) => c.distinct).length;
    // A short query's expansions make dozens of low-weight cursors that pruning seldom skips
    // (at 200k documents it scores ~90% of their postings): scored term at a time instead.
    // Longer ones term at a time with accumulators pruned by bounds (at 200k: 0.4x MaxScore's
    // time on the RM3 pass). Past BOUNDED_TOPK_DOCS only the RM3 pass, which starts from the
    // feedback documents' floor (0.91x MaxScore's CPU at 1M); the first pass, without one, fills
    // too many accumulators there (1.21x).
    const topK = groups ? accumulatedTopK : known || compact.documentCount <= BOUNDED_TOPK_DOCS ? boundedTopK : maxScoreTopK;
    const hits = await windowedTopK(topK, cursors, { k, idOf: (docId) => compact.externalId(docId), keep: keepDoc, coordination, maxCoordination, known, whole, counted, scratch: this.scratch }, pause, { postings: this.windowPostings, ms: this.querySliceMs, pace: this.windowPace });
    return { total: counted ? counted.matched : total, hits };
  }

  /** The snippet of a hit for the index terms `wanted` (query terms and their prefix and fuzzy matches). */
  protected snippet(hit: DocHit, wanted: ReadonlySet<string>): string {
    const doc = this.meta(hit.id, hit.doc);
    if (!doc) return '';
    if (!doc.plain) {
      doc.body = plainText(doc.body);
      doc.plain = true;
    }
    const matched = this.compact.heldTerms(hit.doc, 'text', wanted);
    const isMatch = (t: string) => matched.has(t);
    return (
      buildSnippet(doc.body, this.analyzer, isMatch, { maxChars: this.snippetChars }) ??
      buildSnippet(doc.summary, this.analyzer, isMatch, { maxChars: this.snippetChars }) ??
      leadSnippet(doc.summary || doc.body, this.snippetChars)
    );
  }
}
