import type { FacetCounts } from '../../service/search/browse';
import { fuse } from '../../service/search/fusion';
import type { MeaningPage, MeaningQuery } from '../../service/search/hybrid-search';
import type { Scored } from '../../service/search/scoring/top-hits';
import type { ExhaustiveIndex } from './exhaustive-index';

/**
 * The reference of search by meaning's pages (service/search/hybrid-search.ts, docs/api.md
 * "Search by meaning"), written from the definition and nothing else: the result set built as
 * a set from the exhaustive keyword search's matches (`ExhaustiveIndex.match`, every match scored)
 * and the semantic candidates, judged on the items themselves (`matches`), ordered, counted and
 * faceted plainly. The pruned path (the keyword index counting `IndexQuery.also`) must give the
 * same pages. Slow and obviously right; never used by the service.
 */
export function exhaustiveMeaningPage(index: ExhaustiveIndex, q: MeaningQuery): MeaningPage & { keyword: Scored[] } {
  const sort = q.sort ?? 'relevance';
  const end = q.offset + q.limit;
  const passes = (id: string) => index.passes(id, q.filter);
  const candidates = q.nearest.map((h) => h.id);
  const kept = q.nearest.filter((h) => passes(h.id));
  const m = q.mode === 'hybrid' ? index.match({ text: q.text, filter: q.filter }) : { hits: [], matched: [] };
  // The members before the filter (the facets' domain): the keyword matches and the candidates.
  const domain = [...new Set([...m.matched, ...candidates])];
  const facets: FacetCounts | undefined = q.facets?.length
    ? index.facets(domain, {
        text: q.text,
        filter: q.filter,
        facets: q.facets,
        facetLimit: q.facetLimit,
        limit: 0,
        offset: 0,
      })
    : undefined;
  const members = [...new Set([...m.hits.map((h) => h.id), ...kept.map((h) => h.id)])];
  let ranked: Scored[];
  if (sort !== 'relevance') {
    ranked = members.map((id) => ({ id, score: 0 })).sort(index.order(sort));
  } else if (q.mode === 'semantic') {
    ranked = kept.map((h) => ({ id: h.id, score: h.score }));
  } else if (q.fusion === 'normalized') {
    // Every keyword match, its score over the best one.
    ranked = fuse(m.hits, kept, { ratio: q.ratio, method: 'normalized', keywordScale: 'best' });
  } else {
    const first = m.hits.slice(0, q.candidates);
    ranked = fuse(first, kept, { ratio: q.ratio, method: q.fusion });
    const fused = new Set(ranked.map((h) => h.id));
    for (const h of m.hits.slice(q.candidates)) if (!fused.has(h.id)) ranked.push({ id: h.id, score: 0 });
  }
  return {
    total: members.length,
    hits: ranked.slice(q.offset, end).map((h) => ({ id: h.id, score: h.score })),
    ...(facets && { facets }),
    keyword: m.hits,
  };
}
