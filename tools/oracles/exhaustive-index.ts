import type { WeightedTerm } from '../../service/search/index/cursor';
import type { IndexHit, IndexPage, IndexQuery, SearchIndex } from '../../service/search/search-index';
import { ITEM_TYPES, type Item } from '../../service/content/item';
import { itemDay, matches, withoutPart, type ItemFilter } from '../../service/content/item-filter';
import type { FacetCounts } from '../../service/search/browse';
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

type RankQuery = Pick<IndexQuery, 'text' | 'filter'>;

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
  // The items written, by id: filters, facets and sorts are judged on them (`matches`, `itemDay`).
  private items = new Map<string, Item>();

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
    for (const item of items) this.items.set(item.id, item);
    return this.pruned.upsert(items);
  }

  remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.items.delete(id);
    return this.pruned.remove(ids);
  }

  replaceAll(items: readonly Item[]): Promise<void> {
    this.items = new Map(items.map((i) => [i.id, i]));
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

  /**
   * `search`'s page, every match scored: the oracle of the pruned search (same ids, scores, total,
   * snippets, facets). Filters are `matches` on the items written; a sort other than relevance
   * orders every match passing them by the items' fields (scores 0); facets count every match
   * (every item without words) passing the filter without the facet's own part.
   */
  exhaustive(query: IndexQuery): IndexPage {
    const text = query.text.trim();
    const sort = query.sort ?? (text ? 'relevance' : 'date:desc');
    let hits: Scored[];
    let matched: string[];
    let highlight = new Set<string>();
    if (!text) {
      matched = [...this.items.keys()];
      hits = matched.filter((id) => this.passes(id, query.filter)).map((id) => ({ id, score: 0 }));
    } else {
      const m = this.match(query);
      highlight = m.highlight;
      hits = m.hits;
      matched = m.matched;
      if (sort !== 'relevance') hits = hits.map((h) => ({ id: h.id, score: 0 }));
    }
    if (sort !== 'relevance' || !text) hits.sort(this.order(sort === 'relevance' ? 'date:desc' : sort));
    const page = hits.slice(0, query.offset + query.limit).slice(query.offset);
    const wanted = query.snippets === false ? undefined : highlight;
    return {
      total: hits.length,
      hits: page.map((h): IndexHit => ({
        id: h.id,
        score: h.score,
        snippet: wanted ? this.seams.snippet({ ...h, doc: this.shortId(h.id) }, wanted) : '',
      })),
      ...(query.facets?.length ? { facets: this.facets(matched, query) } : {}),
    };
  }

  /** Whether item `id` passes `filter` (none: every item). */
  passes(id: string, filter: ItemFilter | undefined): boolean {
    return !filter || matches(this.items.get(id)!, filter);
  }

  /** The order of `sort` on the items: by day or update time, ties by id. */
  order(sort: 'date:desc' | 'date:asc' | 'updated:desc'): (a: Scored, b: Scored) => number {
    const key = (h: Scored) => {
      const item = this.items.get(h.id)!;
      return sort === 'updated:desc' ? Date.parse(item.updated_at) : Number(itemDay(item).replace(/-/g, ''));
    };
    const sign = sort === 'date:asc' ? 1 : -1;
    return (a, b) => sign * (key(a) - key(b)) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }

  /** Disjunctive facet counts over `matched`: each facet counts the items passing the filter without its own part. */
  facets(matched: readonly string[], query: IndexQuery): FacetCounts {
    const f = query.filter ?? {};
    const out: FacetCounts = {};
    if (query.facets?.includes('type')) {
      const counts: Record<string, number> = Object.fromEntries(ITEM_TYPES.map((t) => [t, 0]));
      const g = withoutPart(f, 'type');
      for (const id of matched) if (this.passes(id, g)) counts[this.items.get(id)!.type] += 1;
      out.type = counts;
    }
    if (query.facets?.includes('tag')) {
      const counts = new Map<string, number>();
      const g = withoutPart(f, 'tag');
      for (const id of matched) {
        if (!this.passes(id, g)) continue;
        for (const t of new Set(this.items.get(id)!.tags.map((x) => x.toLowerCase())))
          counts.set(t, (counts.get(t) ?? 0) + 1);
      }
      const top = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      out.tag = Object.fromEntries(top.slice(0, query.facetLimit ?? 20));
    }
    return out;
  }

  /** Every matching id with its score, best first (ties by id): the full ranking, to any depth. */
  rank(query: RankQuery & { filter?: ItemFilter }): { terms: string[]; ranked: Scored[] } {
    const { terms, hits } = this.match(query);
    return { terms, ranked: hits };
  }

  /**
   * Every matching id with its score, best first (ties by id), and the index terms to highlight
   * (`hits`: those passing the filter; `matched`: every match, for facets; also read by
   * exhaustive-hybrid.ts).
   * Short queries score their terms with prefix and fuzzy expansions; longer ones score exact
   * terms, then expand with RM3 (both through `scoreTerms`), then the top `depth` are re-scored
   * by proximity (`exhaustiveProximitySource`: window counts and frequencies found plainly).
   */
  match(query: RankQuery): { terms: string[]; highlight: Set<string>; hits: Scored[]; matched: string[] } {
    const plan = this.plan(query.text);
    const { terms } = plan;
    // Snippets highlight what the user asked for (and its prefix and fuzzy matches), not RM3's terms.
    const highlight = new Set(plan.scored.map(([t]) => t));
    if (!terms.length) return { terms, highlight, hits: [], matched: [] };
    const filter = query.filter;
    const keep: Keep | undefined = filter ? (id) => this.passes(id, filter) : undefined;
    // Every document holding a term scored last, whatever the filter (facets count them).
    const all = (scored: readonly WeightedTerm[]) => this.runExact(scored, undefined).map((h) => h.id);
    // Short queries are matched literally (prefixes as you type); expansion serves longer ones.
    if (plan.short) {
      const hits = this.runExact(plan.scored, keep, plan.groups).sort(byRank);
      return { terms, highlight, hits, matched: all(plan.scored) };
    }
    let last = plan.scored;
    const x = this.ranking.expansion;
    const expand = x.enabled && this.size() >= x.minDocs;
    // RM3's feedback documents are the best matches whatever the filter; the expanded pass is filtered.
    let hits = this.runExact(plan.scored, expand ? undefined : keep);
    if (expand && hits.length > 0) {
      last = this.expanded(terms, topHits(hits, x.fbDocs), plan.synonyms);
      hits = this.runExact(last, keep);
    }
    hits.sort(byRank);
    const p = this.ranking.proximity;
    const source = p.weight > 0 ? exhaustiveProximitySource(this.seams.postingsView()) : undefined;
    if (source) {
      const docs = hits.slice(0, p.depth).map((h) => this.shortId(h.id));
      hits = atOnce(proximityRerank(source, terms, hits, docs, p, proximityUnit(this.ranking, expand, terms)));
    }
    return { terms, highlight, hits, matched: all(last) };
  }

  /**
   * RM3's feedback of a long query: the first pass's top `fbDocs` (the feedback documents, best
   * first, whatever the filter) and the expanded query's weighted terms, as `match` uses them;
   * undefined when the query is short or not expanded (expansion off, too few documents, or no match).
   */
  feedback(query: RankQuery): { docs: Scored[]; terms: WeightedTerm[] } | undefined {
    const plan = this.plan(query.text);
    const x = this.ranking.expansion;
    if (!plan.terms.length || plan.short || !x.enabled || this.size() < x.minDocs) return undefined;
    const hits = this.runExact(plan.scored, undefined);
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
