import type { WeightedTerm } from './index/cursor';
import type { Item } from '../content/item';
import { isEmptyFilter, type ItemFilter } from '../content/item-filter';
import { plainTextOf } from '../content/plain-text';
import { atOnce, inSlices, TimeSlicer, type Stepwise } from '../lib/yield-to-loop';
import { Analyzer } from './analysis/analyzer';
import { buildSnippet, leadSnippet } from './analysis/snippet';
import { DayOrder, FacetTally, firstK, sortOrder } from './browse';
import { DocColumns, type ColumnSource, type CompiledFilter } from './doc-columns';
import type { CompactIndex } from './index/compact-index';
import { popcount, type DocKeep } from './index/postings-index';
import type { PostingsView } from './index/postings-view';
import type { SegmentStore } from './index/segment-store';
import { IndexLifecycle, type ExitPersist, type IndexOrigin, type Keep } from './index-lifecycle';
import { rm3Weights, type TermVector } from './query/expansion';
import { planQuery, type QueryPlan } from './query/query-plan';
import { SynonymTable } from './query/synonyms';
import type { SynonymsFile } from '../../configs';
import { QueryGate } from './query-gate';
import { DEFAULT_RANKING, type RankingOptions } from './ranking';
import { accumulatedTopK } from './scoring/accumulated-top-k';
import { boundedTopK } from './scoring/bounded-top-k';
import { proximityRerank } from './scoring/proximity';
import { exactScore, type KeptSample } from './scoring/top-k';
import type { DocHit } from './scoring/top-hits';
import { TopKScratch, TopPairs } from './scoring/top-k-scratch';
import {
  FEWEST_WINDOW_POSTINGS,
  MAX_OPEN_WINDOW_POSTINGS,
  MAX_WINDOW_POSTINGS,
  WINDOW_POSTINGS,
  WindowPace,
  windowedTopK,
} from './scoring/windowed-top-k';
import type { IndexHit, IndexPage, IndexQuery, SearchIndex } from './search-index';
import { tallyLive } from './live-tally';
import { traced, tracing } from './index/step-trace';
import { UpdateOrder } from './update-order';

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
  /**
   * Synonyms applied at query time (`SEARCH_SYNONYMS_FILE`, read by `readSynonymsFile`), analysed
   * here with the index's analyzer; a phrase that analyses to nothing throws `SettingsError`.
   * @default none
   */
  readonly synonyms?: SynonymsFile;
};

/**
 * Writes pause this long, ms, before the browse structures are prepared again in the background
 * (`EmbeddedIndex.prepareBrowse`): under a stream of writes each would rebuild the orders
 * (~0.3 s of CPU at 1M documents); a browse meanwhile brings them up itself, as before.
 */
const PREPARE_IDLE_MS = 1000;

/**
 * One original query term's weight in the final pass, the unit of proximity's features: RM3's
 * λ over the query's length when the query was expanded, else 1 over it (as the sweep has it).
 */
export function proximityUnit(r: RankingOptions, expanded: boolean, terms: readonly string[]): number {
  return (expanded ? r.expansion.originalWeight : 1) / terms.length;
}

/**
 * What a reference search reads of an `EmbeddedIndex` to give the pages its pruned search must
 * give (the exhaustive oracle, tools/oracles/exhaustive-index.ts): the same plan, filters, RM3
 * feedback vectors, coordination and snippets, and the postings and their statistics only
 * through `postingsView()`. Each call reads the index served at the time.
 */
export interface IndexSeams {
  /** `EmbeddedIndex.plan`. */
  plan(text: string): QueryPlan;
  /**
   * The filter of a query as the pruned path checks it, by short id (undefined: every
   * document); the oracle filters by `matches` on its own items and may compare with it.
   */
  filter(filter: ItemFilter | undefined): Keep | undefined;
  /** The term vector of an indexed document (RM3's feedback), from the forward index. */
  vector(doc: number): TermVector;
  /** Query terms (`groups`: each with its expansions) of which a document holds one. */
  groupsMatched(doc: number, groups: ReadonlyArray<readonly string[]>): number;
  /** The snippet of a hit for the index terms `wanted`. */
  snippet(hit: DocHit, wanted: ReadonlySet<string>): string;
  /** The served index's postings and statistics (`CompactIndex.postingsView`). */
  postingsView(): PostingsView;
}

/** A relevance pass's scores: any document's (`IndexQuery.scoreAlso`). */
interface RankedPass {
  /** Document `doc`'s keyword score, as the ranking gives it (0 for one that matches no term). */
  readonly scoreOf: (doc: number) => number;
}

/**
 * `scoreOf` that answers from `hits` first: their scores are the ranking's last word (the top
 * ones re-scored by proximity), the rest the pass's own.
 */
function scoredFirst(hits: readonly DocHit[], scoreOf: (doc: number) => number): (doc: number) => number {
  const known = new Map(hits.map((h) => [h.doc, h.score]));
  return (doc) => known.get(doc) ?? scoreOf(doc);
}

/** One scoring pass of `EmbeddedIndex.runPruned`. */
interface PrunedPass {
  /** Awaited between a term's postings and the next, and between windows of documents. */
  readonly pause: () => Promise<void>;
  readonly terms: readonly WeightedTerm[];
  readonly keep: DocKeep | undefined;
  /**
   * Counts the total through this instead of `keep`: called once per matching document (in
   * short-id order), it answers whether the document counts (a facet tally, a collector).
   */
  readonly visit?: (doc: number) => boolean;
  /** Hits wanted. */
  readonly k: number;
  /** A short query's groups (a query term and its expansions), for coordination; the pass then scores term at a time. */
  readonly groups?: ReadonlyArray<readonly string[]>;
  /** Count every matching document (the total). @default true */
  readonly count?: boolean;
  /** Documents known to match (RM3's feedback documents): their scores start the pruning. */
  readonly known?: readonly number[];
  /** Kept documents met by the pass, with their partial sums (`TopKOptions.sample`). */
  readonly sample?: KeptSample;
  /** The query reads these terms again: their values are kept at their first use (`termValues`). @default false */
  readonly reread?: boolean;
}

/**
 * How RM3's first pass (not filtered) gives the filtered expanded pass a floor under a filter
 * keeping `kept` of `docs` documents: the first pass's best documents that pass the filter are
 * scored under the expanded query (`known`), so that pass needs `last` of them.
 *
 * - A filter keeping ~80 % of the documents or more: the first pass asks for enough documents
 *   that on average `last + 2√last` of them pass it (`KEPT_MARGIN`), at most `2 × last` (a type
 *   filter keeping 90 % went from 1.17x the unfiltered query's CPU to 1.01x, 200k documents).
 *   Asked for `last / share` only (12 at 90 %), fewer than `last` passed for about a third of the
 *   queries (1 - 0.9^12 - 12 × 0.1 × 0.9^11 = 0.34 by chance), so no floor: such filtered passes
 *   cost up to 2.1x the query unfiltered (per-query ratio p90 1.34-1.36x; with the margin
 *   1.13-1.15x; BENCHMARKS.md "Narrow filters' floor").
 * - A narrower one: asking for as many (~120 for a filter keeping 8.6 %) cost more than the
 *   floor they give saved (1.44x, against 1.16x): the first pass asks for `last`, and keeps
 *   aside the best `SAMPLE_KEPT × last` documents the filter keeps among those it met, by their
 *   partial sums (`TopKOptions.sample`), whose expanded scores are the floor (tag and year
 *   filters 1.11x and 1.09x to 1.04x and 1.03x with the pass's partial sums taken as it goes,
 *   2026-12-05, BENCHMARKS.md "Narrow filters' floor").
 */
function firstPassUnderFilter(last: number, kept: number, docs: number): { k: number; sample: number } {
  const enough = kept > 0 ? Math.ceil(((last + KEPT_MARGIN * Math.sqrt(last)) * docs) / kept) : Infinity;
  if (enough <= 2 * last) return { k: enough, sample: 0 };
  return { k: last, sample: kept > 0 ? SAMPLE_KEPT * last : 0 };
}

/** `firstPassUnderFilter`'s documents kept aside, per document the expanded pass asks for. */
const SAMPLE_KEPT = 2;

/** `firstPassUnderFilter`'s margin: the first pass asks for `last + KEPT_MARGIN × √last` kept documents on average. */
const KEPT_MARGIN = 2;

/**
 * The embedded index over title, summary, tags and the plain text of the body, with Porter2
 * stemming and English stopwords (`Analyzer`), field boosts, prefix and fuzzy matching for short
 * queries, RM3 query expansion, and highlighted snippets. Postings, term vectors and the
 * vocabulary live in `CompactIndex` (typed arrays in segments; MiniSearch's BM25 formula, and
 * its radix tree's prefix and fuzzy answers from typed arrays: `Vocabulary`), kept and persisted
 * by `IndexLifecycle`. Every query is scored by dynamic pruning over them (a short query term at a
 * time, `accumulatedTopK`; a longer one with accumulators pruned by bounds, `boundedTopK`, which is
 * MaxScore, `maxScoreTopK`, under a coordination factor: see `runPruned`) with its work bounded by `QUERY_LIMITS` (see
 * `plan`), and only the requested page is given snippets. Holds everything in memory: fine to a
 * few hundred thousand items on one node.
 */
export class EmbeddedIndex implements SearchIndex {
  /** For logs only (`content loaded and indexed`); no API answer, metric or health field carries it. */
  readonly engine = 'embedded';
  readonly ranking: RankingOptions;
  readonly analyzer = new Analyzer();
  // The served index, its documents' items, writes and persistence.
  private readonly store: IndexLifecycle;
  private readonly snippetChars: number;
  private readonly querySliceMs: number;
  private readonly windowPostings: number;
  // The scorers' pace in their last window (`windowedTopK`), across queries.
  private readonly windowPace = new WindowPace();
  // The accumulator scorers' arrays, reused by every query (a scorer runs to its end in one call).
  private readonly scratch = new TopKScratch();
  // Queries run in slices, one at a time; writes wait for the one under way (`QueryGate`).
  private readonly gate = new QueryGate();
  private readonly synonyms: SynonymTable;
  // The documents' filter and sort attributes by short id, and their orders by day and by update time (browsing).
  private readonly columns = new DocColumns();
  private readonly dayOrder = new DayOrder();
  private readonly updateOrder = new UpdateOrder();
  // The background preparation of the columns and orders (`prepareBrowse`): the one under way,
  // whether a change came since it began, and the timer that starts it once writes pause.
  private preparing: Promise<void> | undefined;
  private prepareAgain = false;
  private prepareTimer: NodeJS.Timeout | undefined;

  constructor(opts: EmbeddedIndexOptions = {}) {
    const {
      snippetChars,
      indexSliceMs,
      segments,
      checkpointIdleMs,
      minMergeDocs,
      querySliceMs,
      windowPostings,
      synonyms,
      ...ranking
    } = opts;
    this.synonyms = SynonymTable.build(synonyms, (text) => this.analyzer.analyze(text));
    this.querySliceMs = querySliceMs ?? 5;
    this.windowPostings = windowPostings ?? WINDOW_POSTINGS;
    this.ranking = { ...DEFAULT_RANKING, ...ranking };
    this.snippetChars = snippetChars ?? 200;
    this.store = new IndexLifecycle({
      analyzer: this.analyzer,
      gate: this.gate,
      segments,
      checkpointIdleMs,
      minMergeDocs,
      indexSliceMs,
      onMerged: () => this.prepareSoon(),
    });
  }

  /** The index served now. */
  private get compact(): CompactIndex {
    return this.store.compact;
  }

  /**
   * Settles once background merges are done, the segments they made are written and the browse
   * structures are prepared for the index served (tests, benchmarks).
   */
  async settled(): Promise<void> {
    await this.store.settled();
    if (this.prepareTimer) {
      clearTimeout(this.prepareTimer);
      this.prepareTimer = undefined;
      await this.prepareBrowse();
    } else await this.preparing;
  }

  /** Whether the browse structures (columns, orders, type bitmaps, block counts) are those of the index served (tests). */
  get browsePrepared(): boolean {
    const cols = this.columns;
    return (
      cols.built === this.compact.idLimit &&
      cols.numberedAs(this.compact.numbering) &&
      this.dayOrder.generation === cols.generation &&
      this.updateOrder.generation === cols.generation
    );
  }

  /** `IndexLifecycle.checkpoint`: merges what was written since the last merge now, and settles once it is served (benchmarks). */
  checkpoint(): Promise<void> {
    return this.store.checkpoint();
  }

  /** Where the index served since the start came from; undefined before the first `replaceAll` ends. */
  get startedFrom(): IndexOrigin | undefined {
    return this.store.startedFrom;
  }

  /** `IndexLifecycle.persistBeforeExit`: on a graceful stop, persists what was written since the last merge within `budgetMs`. */
  persistBeforeExit(budgetMs: number): Promise<ExitPersist> {
    return this.store.persistBeforeExit(budgetMs);
  }

  /** Whether the restored documents' items are not all entered yet (tests). */
  get metadataPending(): boolean {
    return this.store.metadataPending;
  }

  /** Adds or replaces items (`IndexLifecycle.upsert`); the browse structures follow once writes pause (`prepareSoon`). */
  async upsert(items: readonly Item[]): Promise<void> {
    await this.store.upsert(items);
    this.prepareSoon();
  }

  /** Removes items by id, unknown ids ignored (`IndexLifecycle.remove`); the browse structures follow once writes pause. */
  async remove(ids: readonly string[]): Promise<void> {
    await this.store.remove(ids);
    this.prepareSoon();
  }

  /**
   * Builds a new index of `items` (or restores the persisted one at the start) and swaps it in
   * (`IndexLifecycle.replaceAll`), then prepares its browse structures (`prepareBrowse`). A build
   * settles once they are prepared: at the start that is before readiness, so the first browse
   * does not build them (1.4 s at 1M documents), for 1–3 % more time than the build's. A
   * restore settles at once and prepares them in the background: a start from the persisted
   * segment takes 0.6 s at 200k documents, 2.3–4.7 s at 1M, and preparing them (~0.5 s of CPU at
   * 200k) before readiness would double it.
   */
  async replaceAll(items: readonly Item[]): Promise<void> {
    const from = await this.store.replaceAll(items);
    const prepared = this.prepareBrowse();
    if (from === 'content') await prepared;
    // In the background a failure is left to the browse that builds what it needs (the same steps).
    else prepared.catch(() => undefined);
  }

  /**
   * Prepares what browsing, sorting and facet counts read (the documents' columns, the orders by
   * day and by update time, the types' bitmaps, the facet groups' block counts) for the index
   * served, in the background, a slice of about `querySliceMs` at a time, each slice holding the
   * query gate (so queries and writes go between slices): as Meilisearch builds its facet and
   * sort databases when it indexes, not at the first query. A browse that comes meanwhile
   * continues what is under way (`SharedBuild`) rather than starting over. Settles once all is
   * prepared for the index as it then is.
   */
  prepareBrowse(): Promise<void> {
    if (this.preparing) {
      this.prepareAgain = true;
      return this.preparing;
    }
    const run = (async () => {
      do {
        this.prepareAgain = false;
        while (!(await this.gate.run(() => Promise.resolve(this.prepareSlice())))) {
          // Each slice holds the gate once: what waits for it goes between.
        }
      } while (this.prepareAgain);
    })().finally(() => {
      this.preparing = undefined;
    });
    this.preparing = run;
    return run;
  }

  /** `prepareBrowse` once writes have paused for `PREPARE_IDLE_MS` (after a write, after a merge). */
  private prepareSoon(): void {
    if (this.prepareTimer) clearTimeout(this.prepareTimer);
    this.prepareTimer = setTimeout(() => {
      this.prepareTimer = undefined;
      // A failure is left to the browse that builds what it needs (the same steps).
      this.prepareBrowse().catch(() => undefined);
    }, PREPARE_IDLE_MS);
    // No stop waits for it.
    this.prepareTimer.unref();
  }

  /** One slice of the preparation, under the gate: true once everything is prepared. */
  private prepareSlice(): boolean {
    const slicer = new TimeSlicer(this.querySliceMs);
    const job = tracing() ? traced('prepare', this.browsePreparation()) : this.browsePreparation();
    for (;;) {
      if (job.next().done) return true;
      if (slicer.due()) return false;
    }
  }

  /**
   * The preparation's steps: the columns brought up to the index (a fresh job each slice: it
   * continues from the documents entered), then the orders, the types' bitmaps and the block
   * counts of the columns' generation (each continued where a slice or a browse left it).
   */
  private *browsePreparation(): Generator<void, void> {
    yield* this.columns.update(this.columnSource());
    yield* this.dayOrder.ensure(this.columns);
    yield* this.updateOrder.ensure(this.columns);
    yield* this.columns.makingTypeBitmaps();
    yield* this.columns.countingBlocks();
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
   * The terms `text` is scored with (`planQuery`): a repeated term once with its count as
   * weight, its synonyms beside it, a short query's terms with their prefix and fuzzy expansions.
   */
  plan(text: string): QueryPlan {
    return planQuery(
      this.queryTerms(text),
      this.ranking,
      (term, lookup) => this.compact.expansions(term, lookup),
      this.synonyms,
    );
  }

  /** The index terms of the synonyms a query for `text` also searches (`SearchIndex.synonymTerms`). */
  synonymTerms(text: string): string[] {
    return this.synonyms.empty ? [] : this.plan(text).synonyms.map(([t]) => t);
  }

  /** The pieces a reference search reads to give the same pages (see `IndexSeams`). */
  seams(): IndexSeams {
    return {
      plan: (text) => this.plan(text),
      filter: (filter) => {
        if (isEmptyFilter(filter)) return undefined;
        atOnce(this.columns.update(this.columnSource()));
        const all = this.columns.compile(filter).all;
        return (_id, doc) => all(doc);
      },
      vector: (doc) => this.vector(doc),
      groupsMatched: (doc, groups) => this.groupsMatched(doc, groups),
      snippet: (hit, wanted) => this.snippet(hit, wanted),
      postingsView: () => this.compact.postingsView(),
    };
  }

  /** The term vector of an indexed document (RM3's feedback), read from the forward index. */
  private vector(doc: number): TermVector {
    return { tf: this.compact.fieldTerms(doc, 'text'), length: this.compact.fieldLength(doc, 'text') };
  }

  /** Query terms of which a document holds the term or one of its expansions (any field: `text` holds them all). */
  private groupsMatched(doc: number, groups: ReadonlyArray<readonly string[]>): number {
    return groups.filter((g) => g.some((t) => this.compact.hasTerm(doc, 'text', t))).length;
  }

  /** The page `query` asks for (the exhaustive oracle of tools/oracles/exhaustive-index.ts gives the same). */
  search(query: IndexQuery): Promise<IndexPage> {
    return this.gate.run(() => this.searchPruned(query));
  }

  /**
   * `search` by dynamic pruning (`runPruned`): the first RM3 pass asks for the feedback documents only,
   * the last pass for the page; the total is counted from the postings without scoring them.
   * Runs in slices of about `querySliceMs` (under `gate`, so the index does not change
   * meanwhile): a query after a write, which builds its terms' postings afresh, or one over
   * long postings never holds the event loop for long.
   */
  private async searchPruned(query: IndexQuery): Promise<IndexPage> {
    const slicer = new TimeSlicer(this.querySliceMs);
    const pause = () => slicer.maybeYield();
    const text = query.text.trim();
    const sort = query.sort ?? (text ? 'relevance' : 'date:desc');
    const facets = query.facets ?? [];
    // Filters, facets and sorts read the documents' columns, brought up to the index first.
    const keyword = query.keyword !== false;
    const alsoGiven = text || !keyword ? query.also : undefined;
    const columnar =
      !isEmptyFilter(query.filter) ||
      facets.length > 0 ||
      sort !== 'relevance' ||
      !text ||
      (alsoGiven !== undefined && (!Array.isArray(alsoGiven) || alsoGiven.length > 0));
    if (columnar) await this.steps(this.columns.update(this.columnSource()), pause, 'columns.update');
    const cf = columnar ? await this.steps(this.columns.compiling(query.filter), pause, 'columns.compile') : undefined;
    const tally = cf && facets.length ? new FacetTally(this.columns, cf, facets) : undefined;
    if (tally) await this.steps(tally.preparing(), pause, 'facets.prepare');
    const counts = () => (tally ? { facets: tally.counts(query.facetLimit ?? 20) } : {});
    // `also`'s ids that the filter keeps (`kept`), and those of them no term of `terms` matches
    // (`extra`): counted, and tallied in the facets, after the passes that counted the matches.
    // Awaited only here, after the passes: a vector search meanwhile runs beside them (hybrid search).
    const extras = async (terms: readonly WeightedTerm[], total: number, ranked?: RankedPass) => {
      const also = (await alsoGiven) ?? [];
      if (!also.length) return { total };
      const extra: string[] = [];
      const kept: string[] = [];
      const scoreOf = query.scoreAlso && ranked ? ranked.scoreOf : undefined;
      const keywordScores = scoreOf && new Map<string, number>();
      const scored = new Set(terms.filter(([, w]) => w > 0).map(([t]) => t));
      for (const id of also) {
        const doc = this.compact.shortId(id);
        if (doc === undefined) continue;
        // Every field's terms are in `text` too: holding one there is matching the query (one
        // pass over the document's terms, not one per query term: RM3 scores ~45).
        if (scored.size > 0 && this.compact.heldTerms(doc, 'text', scored).size > 0) {
          if (!(cf!.empty || cf!.all(doc))) continue;
          kept.push(id);
          keywordScores?.set(id, scoreOf!(doc));
        } else if (tally ? tally.visit(doc) : cf!.empty || cf!.all(doc)) {
          kept.push(id);
          extra.push(id);
        }
      }
      return { total: total + extra.length, extra, kept, ...(keywordScores && { keywordScores }) };
    };
    if (!keyword) return { hits: [], ...(await extras([], 0)), ...counts() };
    if (!text) return { ...(await this.browse(query, sort, cf!, tally, pause)), ...counts() };
    const plan = this.plan(text);
    const highlight = new Set(plan.scored.map(([t]) => t));
    if (!plan.terms.length) return { hits: [], ...(await extras([], 0)), ...counts() };
    const keep = cf && !cf.empty ? cf.all : undefined;
    const visit = tally?.visit;
    const r = this.ranking;
    const k = query.offset + query.limit;
    const x = r.expansion;
    const expand = !plan.short && x.enabled && this.compact.documentCount >= x.minDocs;
    let page: { total: number; hits: DocHit[] } & Partial<RankedPass>;
    // The terms whose matches `total` counts.
    let counted: readonly WeightedTerm[] = plan.scored;
    if (sort !== 'relevance') {
      // Every match (of the terms a relevance search would score last) passing the filter, in the sort's order.
      let terms = plan.scored;
      if (expand) {
        // The feedback documents whatever the filter (`rm3`, below).
        const first = await this.runPruned({ pause, terms, keep: undefined, k: x.fbDocs, count: false, reread: true });
        if (first.hits.length > 0) terms = this.rm3(plan.terms, first.hits, plan.synonyms);
      }
      counted = terms;
      const matched: number[] = [];
      const total = await this.countMatches(terms, pause, (doc) => {
        const kept = visit ? visit(doc) : !keep || keep(doc);
        if (kept) matched.push(doc);
        return kept;
      });
      const idOf = (doc: number) => this.compact.externalId(doc);
      const docs = await this.steps(firstK(matched, k, sortOrder(sort, this.columns, idOf)), pause, 'sorted:firstK');
      page = { total, hits: docs.map((doc) => ({ doc, id: idOf(doc), score: 0 })) };
    } else if (plan.short)
      page = await this.runPruned({ pause, terms: plan.scored, keep, visit, k, groups: plan.groups });
    else {
      // Proximity re-scores the exact top `depth` of the final pass: that pass asks for at least as many.
      const source = r.proximity.weight > 0 ? this.compact.proximitySource() : undefined;
      const last = source ? Math.max(k, r.proximity.depth) : k;
      // With RM3 the expanded pass reads the original terms again: their values are kept. The
      // first pass asks for as many documents as the expanded pass does (`last`), not only the
      // feedback documents (its best `fbDocs`, the same either way): the k-th best of their
      // expanded scores is a floor of the expanded pass's k-th best, which `fbDocs` (5) documents
      // cannot give a pass of `last` (10 or more), and which it then starts its pruning from.
      // With RM3 the first pass is not filtered (`rm3`, below): the expanded pass is.
      const under =
        expand && keep ? firstPassUnderFilter(last, cf!.kept, this.compact.idLimit) : { k: last, sample: 0 };
      const sample = keep && under.sample > 0 ? { keep, top: new TopPairs().reset(under.sample) } : undefined;
      page = await this.runPruned({
        pause,
        terms: plan.scored,
        keep: expand ? undefined : keep,
        visit: expand ? undefined : visit,
        k: expand ? Math.max(x.fbDocs, under.k) : last,
        count: !expand,
        reread: expand,
        sample,
      });
      if (expand && page.hits.length > 0) {
        // The first pass's best documents that pass the filter, and those it kept aside, match
        // the expanded query (they hold its original terms): their scores start its pruning.
        const known = page.hits.filter((h) => !keep || keep(h.doc)).map((h) => h.doc);
        if (sample) {
          const held = new Set(known);
          for (let i = 0; i < sample.top.size; i++) if (!held.has(sample.top.docs[i])) known.push(sample.top.docs[i]);
        }
        const terms = this.rm3(plan.terms, page.hits, plan.synonyms);
        counted = terms;
        page = await this.runPruned({ pause, terms, keep, visit, k: last, known: known.length ? known : undefined });
      } else if (expand && tally) {
        // Nothing matched: the facets still count the original terms' matches (none).
        await this.countMatches(plan.scored, pause, tally.visit);
      }
      if (source && page.hits.length > 0) {
        const docs = page.hits.map((h) => h.doc);
        // A turn of its own if the scoring's last window used this slice up: the re-ranking's first step ran in it.
        await pause();
        const hits = await inSlices(
          proximityRerank(source, plan.terms, page.hits, docs, r.proximity, proximityUnit(r, expand, plan.terms)),
          slicer,
        );
        page = { ...page, hits: hits.slice(0, k), scoreOf: scoredFirst(hits, page.scoreOf!) };
      }
    }
    const hits = await this.pageHits(page.hits, query, highlight, pause);
    const ranked = page.scoreOf && { scoreOf: page.scoreOf };
    return { hits, ...(await extras(counted, page.total, ranked)), ...counts() };
  }

  /**
   * `ids` in the order of `sort` (not relevance), as a search sorts its hits: by the documents'
   * columns, ties by id; ids not indexed left out (hybrid search's pages, issue 41).
   */
  sorted(ids: readonly string[], sort: Exclude<IndexQuery['sort'] & string, 'relevance'>): Promise<string[]> {
    return this.gate.run(async () => {
      atOnce(this.columns.update(this.columnSource()));
      const compact = this.compact;
      const docs: number[] = [];
      for (const id of ids) {
        const doc = compact.shortId(id);
        if (doc !== undefined) docs.push(doc);
      }
      const idOf = (doc: number) => compact.externalId(doc);
      return docs.sort(sortOrder(sort, this.columns, idOf)).map(idOf);
    });
  }

  /**
   * The snippet of item `id` for a query of `text` (hybrid search's page, issue 41): around its
   * best match of the query's terms, else its lead; '' for an id not indexed.
   */
  snippetOf(id: string, text: string): string {
    return this.snippetsOf([id], text)[0];
  }

  /** `snippetOf` of each of `ids`, the query planned once (its terms' prefix and fuzzy matches). */
  snippetsOf(ids: readonly string[], text: string): string[] {
    if (!ids.length) return [];
    const highlight = new Set(text.trim() ? this.plan(text).scored.map(([t]) => t) : []);
    return ids.map((id) => {
      const doc = this.compact.shortId(id);
      return doc === undefined ? '' : this.snippet({ doc, id, score: 0 }, highlight);
    });
  }

  /**
   * RM3's expanded terms from the first pass's best hits (the feedback documents), taken before
   * any filter, as the semantic candidates are (docs/api.md, "The result set"): the expanded query
   * is then one query whatever the filter, so a facet's count for a value is the total of the
   * query filtered by it, and the filter's own words do not join the query. With the feedback
   * taken under the filter, a tag filter's words (in every feedback document) became expansion
   * terms matching every item with the tag: at 200k documents a `tag-3` filter's total was all
   * 17,147 items tagged so for every query.
   */
  private rm3(terms: readonly string[], hits: readonly DocHit[], synonyms: QueryPlan['synonyms']): WeightedTerm[] {
    const x = this.ranking.expansion;
    const feedback = hits.slice(0, x.fbDocs).map((h) => ({ score: h.score, vector: this.vector(h.doc) }));
    return [...rm3Weights(terms, feedback, x, synonyms)];
  }

  /** The hits `query.offset …` of `hits`, with their snippets for the index terms `highlight`. */
  private async pageHits(
    hits: readonly DocHit[],
    query: IndexQuery,
    highlight: ReadonlySet<string>,
    pause: () => Promise<void>,
  ): Promise<IndexHit[]> {
    const wanted = query.snippets === false ? undefined : highlight;
    const out: IndexHit[] = [];
    for (const h of hits.slice(query.offset)) {
      if (wanted) await pause();
      out.push({ id: h.id, score: h.score, snippet: wanted ? this.snippet(h, wanted) : '' });
    }
    return out;
  }

  /**
   * A search without words: every live document `cf` keeps, in `sort`'s order (`relevance`
   * means `date:desc` here), scores 0; facets counted over every live document. By date the page
   * is read off the documents grouped by day (`DayOrder`), by update time off their order by it (`UpdateOrder`).
   */
  private async browse(
    query: IndexQuery,
    sort: NonNullable<IndexQuery['sort']>,
    cf: CompiledFilter,
    tally: FacetTally | undefined,
    pause: () => Promise<void>,
  ): Promise<IndexPage> {
    const compact = this.compact;
    const n = compact.idLimit;
    const idOf = (doc: number) => compact.externalId(doc);
    // With no document deleted since the last merge every short id is live: the page walk's
    // `keep` then reads the filter's bitmap alone, not each document's id.
    const allLive = compact.documentCount === n;
    const live = allLive ? () => true : (doc: number) => compact.externalId(doc) !== undefined;
    const keep = cf.empty ? live : allLive ? cf.all : (doc: number) => live(doc) && cf.all(doc);
    let total: number | undefined = cf.empty ? compact.documentCount : undefined;
    const liveWords = (out: Int32Array, lo: number, hi: number) => compact.liveWords(out, lo, hi);
    const bits = cf.all.bits;
    if (tally) {
      // Every live document as a bitmap, counted as a search's union is (`visit.words`).
      const job = tallyLive(n, liveWords, tally.visit.words!, { block: tally.blockWork() });
      total = await this.steps(job, pause, 'browse:tallyLive');
    } else if (total === undefined && bits && compact.documentCount === n) {
      // No deleted documents since the last merge (every short id is live): the filter's bitmap
      // counts the total a word at a time, and the page walk stops at the page.
      total = 0;
      for (let w = 0; w < bits.length; w++) if (bits[w] !== 0) total += popcount(bits[w]);
    } else if (total === undefined && bits) {
      // Else the filter's bitmap and the live documents' (in steps): the page walk still stops at
      // the page, where it walked every document, reading its id.
      const both = (live: Int32Array, lo: number, hi: number) => {
        let m = 0;
        for (let w = lo; w < Math.min(hi, bits.length); w++)
          if ((live[w] & bits[w]) !== 0) m += popcount(live[w] & bits[w]);
        return m;
      };
      total = await this.steps(tallyLive(n, liveWords, both), pause, 'browse:countLive');
    }
    let docs: number[];
    if (sort === 'updated:desc') {
      await this.steps(this.updateOrder.ensure(this.columns), pause, 'browse:updateOrder.build');
      const p = await this.steps(
        this.updateOrder.page(this.columns, { offset: query.offset, limit: query.limit, total }, keep, idOf),
        pause,
        'browse:updateOrder.page',
      );
      docs = p.docs;
      total = p.total;
    } else {
      await this.steps(this.dayOrder.ensure(this.columns), pause, 'browse:dayOrder.build');
      const desc = sort !== 'date:asc';
      const p = await this.steps(
        this.dayOrder.page({ desc, offset: query.offset, limit: query.limit, total }, keep, idOf),
        pause,
        'browse:dayOrder.page',
      );
      docs = p.docs;
      total = p.total;
    }
    const hits = docs.map((doc) => ({ doc, id: idOf(doc), score: 0 }));
    return { total, hits: await this.pageHits(hits, { ...query, offset: 0 }, new Set(), pause) };
  }

  /**
   * Counts the documents matching any of `terms` through `visit` (each once, in short-id order):
   * those it answers true for.
   */
  private async countMatches(
    terms: readonly WeightedTerm[],
    pause: () => Promise<void>,
    visit: (doc: number) => boolean,
  ): Promise<number> {
    const r = this.ranking;
    const bm25 = { k: r.bm25.k1, b: r.bm25.b, d: r.bm25.delta };
    const { total } = await this.steps(this.compact.cursorJob(terms, r.boost, bm25, true, visit, false), pause);
    return total;
  }

  /**
   * Runs a job to its end, `pause()` awaited before each of its steps: the first too, or it ran
   * in the slice of the work before it (the first pass's last window, RM3's expansion and the
   * expanded pass's first term together made turns of 40-100 ms of CPU at 1M). With `name`, its
   * steps go to the benches' step log when it is on (index/step-trace.ts).
   */
  private async steps<T>(job: Stepwise<T>, pause: () => Promise<void>, name?: string): Promise<T> {
    // The benches' step log (`--steps`): each step over its threshold, named.
    if (name !== undefined && tracing()) job = traced(name, job);
    for (;;) {
      await pause();
      const step = job.next();
      if (step.done) return step.value;
    }
  }

  /** The served index's documents as the columns read them. */
  private columnSource(): ColumnSource {
    const compact = this.compact;
    return {
      idLimit: compact.idLimit,
      numbering: compact.numbering,
      rowOf: (doc) => this.store.attributeRow(doc),
      attributes: this.store.attributes,
    };
  }

  /**
   * The best `k` of `terms` scored over every matching document (as the exhaustive oracle,
   * tools/oracles/exhaustive-index.ts, scores them), and the number of all its matches, by dynamic pruning; `pause()` is
   * awaited between a term's postings and the next, and between windows of documents (see
   * `PrunedPass`).
   */
  private async runPruned(pass: PrunedPass): Promise<{ total: number; hits: DocHit[] } & RankedPass> {
    const { pause, terms, keep: keepDoc, visit, k, groups, count = true, known, sample, reread = false } = pass;
    const r = this.ranking;
    const compact = this.compact;
    // A short query's scorer meets every matching document: it counts them (the total) as it
    // goes, unless each must be visited (facets).
    const counted = groups && count && k > 0 && !visit ? { matched: 0 } : undefined;
    const job = compact.cursorJob(
      terms,
      r.boost,
      { k: r.bm25.k1, b: r.bm25.b, d: r.bm25.delta },
      count && !counted,
      visit ?? keepDoc,
      reread,
    );
    const { cursors, total, whole } = await this.steps(job, pause);
    // The job's last step (the count's pass over the union) and the first window each in a slice
    // of their own: together they made turns of ~100 ms CPU at 1M.
    await pause();
    const coordination = !r.coordination
      ? undefined
      : groups
        ? (docId: number) => this.groupsMatched(docId, groups)
        : (_docId: number, matched: number) => matched;
    const maxCoordination = !r.coordination ? 1 : groups ? groups.length : cursors.filter((c) => c.distinct).length;
    // A short query's expansions make dozens of low-weight cursors that pruning seldom skips
    // (at 200k documents it scores ~90% of their postings): scored term at a time instead.
    // Longer ones, both RM3 passes, term at a time with accumulators pruned by bounds (at 200k:
    // 0.4x MaxScore's time on the RM3 pass). At 1M the first pass too, since those bounds are per
    // region of documents: a full query's CPU 0.95x with MaxScore's first pass, filtered 0.88-0.90x
    // (in-process A/B, BENCHMARKS.md rm3first; before the regions that pass had filled too many
    // accumulators there, 1.21x). With a coordination factor `boundedTopK` is MaxScore.
    const topK = groups ? accumulatedTopK : boundedTopK;
    // The accumulators sized for the whole index at once, not window by window.
    this.scratch.reserve(compact.idLimit);
    const hits = await windowedTopK(
      topK,
      cursors,
      {
        k,
        idOf: (docId) => compact.externalId(docId),
        keep: keepDoc,
        coordination,
        maxCoordination,
        known,
        whole,
        counted,
        scratch: this.scratch,
        sample,
      },
      pause,
      {
        postings: this.windowPostings,
        fewest: FEWEST_WINDOW_POSTINGS,
        most: Math.max(this.windowPostings, MAX_WINDOW_POSTINGS),
        mostOpen: MAX_OPEN_WINDOW_POSTINGS,
        ms: this.querySliceMs,
        pace: this.windowPace,
      },
    );
    // A document's score in this pass, as the scorer gives it (`IndexQuery.scoreAlso`).
    const scoreOf = (doc: number) => exactScore(cursors, { whole, coordination }, doc);
    return { total: counted ? counted.matched : total, hits, scoreOf };
  }

  /** The snippet of a hit for the index terms `wanted` (query terms and their prefix and fuzzy matches). */
  private snippet(hit: DocHit, wanted: ReadonlySet<string>): string {
    const item = this.store.item(hit.id, hit.doc);
    if (!item) return '';
    // The plain text kept on the item (by its store, or by the index for a large body), else made
    // for this hit (a body under 32 KB, a fraction of a millisecond; as a restored one's always was).
    const body = plainTextOf(item, { keep: false });
    const summary = item.summary ?? '';
    const matched = this.compact.heldTerms(hit.doc, 'text', wanted);
    const isMatch = (t: string) => matched.has(t);
    return (
      buildSnippet(body, this.analyzer, isMatch, { maxChars: this.snippetChars }) ??
      buildSnippet(summary, this.analyzer, isMatch, { maxChars: this.snippetChars }) ??
      leadSnippet(summary || body, this.snippetChars)
    );
  }
}
