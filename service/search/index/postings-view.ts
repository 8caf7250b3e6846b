/**
 * A read-only view of an index's live postings and of the statistics BM25 is defined on, for a
 * scorer that visits every posting: the exhaustive oracle of the pruned search
 * (tools/oracles/exhaustive-scorer.ts), which is not in the service. It gives the postings as
 * they are stored (the base segment's runs, then the appended segments', deleted documents left
 * out), not the pruned path's assembly of them (base runs merged over fields, cached parts,
 * block bounds, cursors), which is what the oracle checks; and the searched fields, document
 * frequencies, idf and lengths that the pruned path scores with.
 */
export interface PostingsView {
  /** Field names by field id. */
  readonly fields: readonly string[];
  /** Short document ids are below this (for scratch arrays indexed by them). */
  idLimit(): number;
  /** Moves with every write and merge: what is derived from the view holds for one version. */
  version(): number;
  /** Field ids that `boost` searches (boost > 0), in the order a document's score sums them. */
  searched(boost: Readonly<Record<string, number>>): readonly number[];
  /** The id of an index term, or undefined. */
  termId(term: string): number | undefined;
  /** Live documents whose field `f` holds term `t`. */
  df(f: number, t: number): number;
  /** BM25 idf of term `t` in field `f` over the live documents. */
  idf(f: number, t: number): number;
  /** Calls `fn` for every live posting of term `t` in field `f`, in document order. */
  eachPosting(f: number, t: number, fn: (doc: number, tf: number) => void): void;
  /** Terms in document `doc`'s field `f`, repeats counted (its BM25 length). */
  fieldLength(doc: number, f: number): number;
  /** Field `f`'s average length over the live documents (their lengths' exact sum over their count). */
  averageLength(f: number): number;
  /** The external id of a short document id. */
  externalId(doc: number): string;
  /** The short id of an indexed document's external id, if indexed. */
  shortId(id: string): number | undefined;
  /** Live documents. */
  documents(): number;
  /** The field whose positions are kept, −1 for none. */
  readonly positionsField: number;
  /** The positions (token offsets) of term `t` in a document's field with positions, increasing. */
  positions(doc: number, t: number): number[];
}
