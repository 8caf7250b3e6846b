/**
 * A `CompactIndex` and MiniSearch over the same documents, kept in step, and the scores each
 * gives: MiniSearch's own search is the reference of the exhaustive scorer's BM25
 * (test/tools/oracles/exhaustive-scorer.test.ts) and of the expansions' weights
 * (test/service/search/index/compact-index.test.ts).
 */
import type { WeightedTerm } from '../../service/search/index/cursor';
import MiniSearch from 'minisearch';
import { CompactIndex } from '../../service/search/index/compact-index';
import type { Bm25Params } from '../../service/search/index/postings-index';

import { scoreTerms } from '../../tools/oracles/exhaustive-scorer';

export interface Doc {
  id: string;
  title: string;
  text: string;
}

export const boost = { title: 0.2, text: 1 };
export const bm25: Bm25Params = { k: 0.9, b: 0.4, d: 0 };

export const words = (text: string): string[] => text.split(' ').filter(Boolean);

/**
 * The index under test and MiniSearch over the same documents, kept in step. MiniSearch takes a
 * field's length to be its distinct tokens; each occurrence is made distinct (`term\0n`) until
 * `processTerm` strips the mark, so its length is the number of terms, as BM25 (and
 * `CompactIndex`) count it.
 */
export class Both {
  readonly c = new CompactIndex(['title', 'text']);
  readonly m = new MiniSearch<Doc>({
    fields: ['title', 'text'],
    autoVacuum: false,
    tokenize: (text) => words(text).map((t, i) => `${t}\u0000${i}`),
    processTerm: (term) => term.slice(0, term.indexOf('\u0000')),
  });
  constructor(items: readonly Doc[]) {
    for (const d of items) this.add(d);
  }
  add(d: Doc): void {
    this.c.add(d.id, [words(d.title), words(d.text)]);
    this.m.add(d);
  }
  discard(id: string): void {
    this.c.discard(id);
    this.m.discard(id);
  }
}

export function build(items: readonly Doc[]): Both {
  return new Both(items);
}

/** What MiniSearch's own search gives: OR, exact terms, `boostTerm`, coordination undone. */
export function viaSearch(b: Both, terms: readonly WeightedTerm[]): Map<string, number> {
  const m = b.m;
  const weights = new Map<string, number>();
  for (const [t, w] of terms) weights.set(t, w);
  const res = m.search(terms.map(([t]) => t).join(' '), {
    fields: Object.keys(boost),
    boost,
    bm25,
    combineWith: 'OR',
    boostTerm: (t) => weights.get(t) ?? 0,
  });
  return new Map(res.map((r) => [r.id as string, r.score / r.queryTerms.length]));
}

/** What the exhaustive scorer gives over the index. */
export function viaScorer(b: Both, terms: readonly WeightedTerm[]): Map<string, number> {
  const { ids, scores } = scoreTerms(b.c.postingsView(), terms, boost, bm25);
  return new Map(ids.map((id, i) => [id, scores[i]]));
}

export function expectSameScores(actual: Map<string, number>, expected: Map<string, number>): void {
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  // Bit for bit: the same expression and document frequencies; the index's length averages are
  // exact sums over the live documents, which MiniSearch's running ones equal while documents are
  // only added to these small collections (removes make the running ones drift: issue 39).
  for (const [id, s] of expected) expect(actual.get(id)).toBe(s);
}
