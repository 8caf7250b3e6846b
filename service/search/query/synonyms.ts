import { SettingsError, synonymsIssue, type SettingsIssue, type SynonymsFile } from '../../../configs';
import type { WeightedTerm } from '../index/cursor';

/**
 * Weight of a synonym beside the word the query holds: below 1, so a document with the word
 * outranks one with only its synonym at the same BM25 weight (Meilisearch treats them as equal
 * and its maintainers call that a bug: meilisearch#3410; Algolia makes it a choice,
 * `alternativesAsExact`), and above MiniSearch's prefix and fuzzy weights (0.375, 0.45): a
 * synonym was written down by a person, a near spelling was guessed. Chosen, not tuned
 * (BENCHMARKS.md, "Synonyms").
 */
export const SYNONYM_WEIGHT = 0.5;

/** Index terms added by synonyms to one query, at most (bounds a query's work as `QUERY_LIMITS` does). */
export const MAX_SYNONYM_TERMS = 32;

/** A phrase of a rule analysed into index terms. */
type Phrase = readonly string[];

/** What one source phrase (as index terms) stands for. */
interface Entry {
  readonly source: Phrase;
  /** Phrases a query holding `source` also searches (never `source` itself). */
  readonly alternatives: Phrase[];
}

/** A place in a query's terms where a rule's phrase stands, and what it adds. */
export interface SynonymMatch {
  /** Position of the phrase's first term in the query's terms. */
  readonly start: number;
  /** Terms of the phrase. */
  readonly length: number;
  /** The alternatives' index terms with their weights (`SYNONYM_WEIGHT` × phrase length ÷ alternative length). */
  readonly terms: readonly WeightedTerm[];
}

const key = (p: Phrase) => p.join(' ');

/**
 * A synonyms file analysed into index terms (`analyze`: the index's analyzer, so stemming and
 * stopwords apply to synonyms as to documents), looked up in a query's terms at query time.
 *
 * - `a, b, c`: each phrase's alternatives are the others; `a, b => c, d`: a and b have c and d
 *   (and c, d have nothing, so it does not go backwards). Rules for one phrase add up (Solr). The
 *   word itself is always searched too: `a => b` is Solr's `a => a, b` (what Meilisearch and
 *   Typesense call one-way synonyms); a search box does not drop what the user typed.
 * - Phrases of several words match the query's consecutive terms (stopwords gone), the longest
 *   from the leftmost position first, as Lucene's synonym filter parses (`match`).
 * - An alternative of m terms standing for a phrase of n adds each of its terms at weight
 *   `SYNONYM_WEIGHT` × n ÷ m: a bag of words, not a phrase, whose weights sum to the phrase's
 *   own times `SYNONYM_WEIGHT`.
 */
export class SynonymTable {
  /** Entries by their source's first term, longest source first. */
  private readonly byFirst = new Map<string, Entry[]>();

  private constructor() {}

  /** No synonyms. */
  static readonly EMPTY = new SynonymTable();

  /**
   * The table of `file`, each phrase analysed by `analyze`. Throws `SettingsError` naming the
   * file and line of every phrase that analyses to nothing (stopwords and one-letter words only:
   * it could never match, as Lucene refuses it).
   */
  static build(file: SynonymsFile | undefined, analyze: (text: string) => string[]): SynonymTable {
    const table = new SynonymTable();
    if (!file) return table;
    const issues: SettingsIssue[] = [];
    const entries = new Map<string, Entry>();
    const entryOf = (source: Phrase): Entry => {
      let e = entries.get(key(source));
      if (!e) entries.set(key(source), (e = { source, alternatives: [] }));
      return e;
    };
    for (const rule of file.rules) {
      const analysed = (ps: readonly string[]): Phrase[] | undefined => {
        const out: Phrase[] = [];
        for (const p of ps) {
          const terms = analyze(p);
          if (!terms.length) {
            issues.push(
              synonymsIssue(
                file.path,
                `"${p}" has no searchable word (stopwords and one-letter words are dropped, as in documents)`,
                rule.line,
              ),
            );
            return undefined;
          }
          out.push(terms);
        }
        return out;
      };
      const from = analysed(rule.from);
      const to = rule.to === rule.from ? from : analysed(rule.to);
      if (!from || !to) continue;
      for (const source of from) {
        const entry = entryOf(source);
        for (const alt of to) {
          if (key(alt) === key(source) || entry.alternatives.some((a) => key(a) === key(alt))) continue;
          entry.alternatives.push(alt);
        }
      }
    }
    if (issues.length) throw new SettingsError(issues);
    for (const e of entries.values()) {
      if (!e.alternatives.length) continue;
      const list = table.byFirst.get(e.source[0]) ?? [];
      list.push(e);
      table.byFirst.set(e.source[0], list);
    }
    for (const list of table.byFirst.values())
      list.sort((a, b) => b.source.length - a.source.length || (key(a.source) < key(b.source) ? -1 : 1));
    return table;
  }

  /** Whether the table holds no synonyms. */
  get empty(): boolean {
    return this.byFirst.size === 0;
  }

  /**
   * The phrases of `terms` (a query's index terms in order, repeats kept) that have synonyms:
   * at each position the longest phrase that starts there, then on after it (Lucene's greedy
   * parse); with the terms each adds.
   */
  match(terms: readonly string[]): SynonymMatch[] {
    const out: SynonymMatch[] = [];
    if (this.empty) return out;
    for (let i = 0; i < terms.length;) {
      const entry = this.byFirst
        .get(terms[i])
        ?.find((e) => e.source.length <= terms.length - i && e.source.every((t, j) => terms[i + j] === t));
      if (!entry) {
        i++;
        continue;
      }
      const n = entry.source.length;
      const added: WeightedTerm[] = [];
      for (const alt of entry.alternatives) for (const t of alt) added.push([t, (SYNONYM_WEIGHT * n) / alt.length]);
      out.push({ start: i, length: n, terms: added });
      i += n;
    }
    return out;
  }
}
