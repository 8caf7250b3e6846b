import type { WeightedTerm } from '../../service/search/index/cursor';
import type { IndexHit, IndexPage, IndexQuery, SearchIndex } from '../../service/search/search-index';
import type { Item } from '../../service/content/item';
import {
  EmbeddedIndex,
  proximityUnit,
  type EmbeddedIndexOptions,
  type IndexSeams,
} from '../../service/search/embedded-index';
import type { Keep } from '../../service/search/index-lifecycle';
import type { QueryPlan } from '../../service/search/query/query-plan';
import type { Analyzer } from '../../service/search/analysis/analyzer';
import type { RankingOptions } from '../../service/search/ranking';
import { proximityRerank } from '../../service/search/scoring/proximity';
import { atOnce } from '../../service/lib/yield-to-loop';
import { exhaustiveProximitySource } from './exhaustive-proximity';
import { rm3Weights } from '../../service/search/query/expansion';

import { byRank, topHits, type Scored } from '../../service/search/scoring/top-hits';
import { scoreTerms } from './exhaustive-scorer';

type RankQuery = Pick<IndexQuery, 'text' | 'type' | 'tag'>;

/**
 * The exhaustive search, kept as the reference that the service's pruned search is compared
 * with: an `EmbeddedIndex` (`pruned`) with every matching document scored (exhaustive-scorer.ts:
 * no pruning, no windows, no slices), the same plan, filters, RM3 and snippets. It reads the
 * index through its seams (`EmbeddedIndex.seams`: the plan, filters, feedback vectors and
 * snippets) and the postings only through `postingsView()`. Writes and `search` go to the
 * pruned index, so one object answers both ways. Property tests prove "pruned == exhaustive"
 * against it (test/service/search/scoring/max-score.test.ts, incremental.test.ts) and the
 * side-by-side benchmark times it as the "before". Never used by the service.
 */
export class ExhaustiveIndex implements SearchIndex {
  /** The index whose contents, plan and snippets the exhaustive search reads; `search` is its pruned one. */
  readonly pruned: EmbeddedIndex;
  private readonly seams: IndexSeams;

  constructor(opts: EmbeddedIndexOptions = {}) {
    this.pruned = new EmbeddedIndex(opts);
    this.seams = this.pruned.seams();
  }

  get engine(): string {
    return this.pruned.engine;
  }

  get analyzer(): Analyzer {
    return this.pruned.analyzer;
  }

  get ranking(): RankingOptions {
    return this.pruned.ranking;
  }

  upsert(items: readonly Item[]): Promise<void> {
    return this.pruned.upsert(items);
  }

  remove(ids: readonly string[]): Promise<void> {
    return this.pruned.remove(ids);
  }

  replaceAll(items: readonly Item[]): Promise<void> {
    return this.pruned.replaceAll(items);
  }

  /** The pruned search's page (`EmbeddedIndex.search`). */
  search(query: IndexQuery): Promise<IndexPage> {
    return this.pruned.search(query);
  }

  size(): number {
    return this.pruned.size();
  }

  plan(text: string): QueryPlan {
    return this.seams.plan(text);
  }

  queryTerms(text: string): string[] {
    return this.pruned.queryTerms(text);
  }

  /** `search`'s page, every match scored: the oracle of the pruned search (same ids, scores, total, snippets). */
  exhaustive(query: IndexQuery): IndexPage {
    const { highlight, hits } = this.match(query);
    const page = hits.slice(0, query.offset + query.limit).slice(query.offset);
    const wanted = query.snippets === false ? undefined : highlight;
    return {
      total: hits.length,
      hits: page.map((h): IndexHit => ({
        id: h.id,
        score: h.score,
        snippet: wanted ? this.seams.snippet({ ...h, doc: this.shortId(h.id) }, wanted) : '',
      })),
    };
  }

  /** Every matching id with its score, best first (ties by id): the full ranking, to any depth. */
  rank(query: RankQuery): { terms: string[]; ranked: Scored[] } {
    const { terms, hits } = this.match(query);
    return { terms, ranked: hits };
  }

  /**
   * Every matching id with its score, best first (ties by id), and the index terms to highlight.
   * Short queries score their terms with prefix and fuzzy expansions; longer ones score exact
   * terms, then expand with RM3 (both through `scoreTerms`), then the top `depth` are re-scored
   * by proximity (`exhaustiveProximitySource`: window counts and frequencies found plainly).
   */
  private match(query: RankQuery): { terms: string[]; highlight: Set<string>; hits: Scored[] } {
    const plan = this.plan(query.text);
    const { terms } = plan;
    // Snippets highlight what the user asked for (and its prefix and fuzzy matches), not RM3's terms.
    const highlight = new Set(plan.scored.map(([t]) => t));
    if (!terms.length) return { terms, highlight, hits: [] };
    const keep = this.seams.filter(query.type, query.tag);
    // Short queries are matched literally (prefixes as you type); expansion serves longer ones.
    if (plan.short) return { terms, highlight, hits: this.runExact(plan.scored, keep, plan.groups).sort(byRank) };
    let hits = this.runExact(plan.scored, keep);
    const x = this.ranking.expansion;
    const expand = x.enabled && this.size() >= x.minDocs;
    if (expand && hits.length > 0)
      hits = this.runExact(this.expanded(terms, topHits(hits, x.fbDocs), plan.synonyms), keep);
    hits.sort(byRank);
    const p = this.ranking.proximity;
    const source = p.weight > 0 ? exhaustiveProximitySource(this.seams.postingsView()) : undefined;
    if (source) {
      const docs = hits.slice(0, p.depth).map((h) => this.shortId(h.id));
      hits = atOnce(proximityRerank(source, terms, hits, docs, p, proximityUnit(this.ranking, expand, terms)));
    }
    return { terms, highlight, hits };
  }

  /**
   * RM3's feedback of a long query: the first pass's top `fbDocs` (the feedback documents, best
   * first) and the expanded query's weighted terms, as `match` uses them; undefined when the query
   * is short or not expanded (expansion off, too few documents, or no match).
   */
  feedback(query: RankQuery): { docs: Scored[]; terms: WeightedTerm[] } | undefined {
    const plan = this.plan(query.text);
    const x = this.ranking.expansion;
    if (!plan.terms.length || plan.short || !x.enabled || this.size() < x.minDocs) return undefined;
    const hits = this.runExact(plan.scored, this.seams.filter(query.type, query.tag));
    if (!hits.length) return undefined;
    const docs = topHits(hits, x.fbDocs);
    return { docs, terms: this.expanded(plan.terms, docs, plan.synonyms) };
  }

  /** RM3's weighted terms of `terms` with the feedback documents `docs` (their term vectors from the forward index). */
  private expanded(terms: readonly string[], docs: readonly Scored[], synonyms: QueryPlan['synonyms']): WeightedTerm[] {
    const feedback = docs.map((h) => ({ score: h.score, vector: this.seams.vector(this.shortId(h.id)) }));
    return [...rm3Weights(terms, feedback, this.ranking.expansion, synonyms)];
  }

  /**
   * Exact terms, weighted: MiniSearch's `search` with `combineWith: 'OR'` and `boostTerm`,
   * without its per-posting objects. With coordination on, a score is multiplied by the number
   * of query terms matched: of `groups` (a query term with its expansions) when given, else of
   * `terms`.
   */
  private runExact(
    terms: readonly WeightedTerm[],
    keep: Keep | undefined,
    groups?: ReadonlyArray<readonly string[]>,
  ): Scored[] {
    const r = this.ranking;
    const { ids, scores, matched } = scoreTerms(this.seams.postingsView(), terms, r.boost, {
      k: r.bm25.k1,
      b: r.bm25.b,
      d: r.bm25.delta,
    });
    const out: Scored[] = [];
    for (let i = 0; i < ids.length; i++) {
      if (keep && !keep(ids[i], this.shortId(ids[i]))) continue;
      const factor = !r.coordination ? 1 : groups ? this.seams.groupsMatched(this.shortId(ids[i]), groups) : matched[i];
      out.push({ id: ids[i], score: scores[i] * factor });
    }
    return out;
  }

  /** The short id of an indexed document (`PostingsView.shortId`). */
  private shortId(id: string): number {
    return this.seams.postingsView().shortId(id)!;
  }
}
