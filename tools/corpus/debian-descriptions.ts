import { createHash } from 'node:crypto';
import { Analyzer } from '../../service/search/analysis/analyzer';
import type { Vaswani, VaswaniItem } from './vaswani';

/**
 * Issue 28's second judged collection: a known-item collection built from Debian's package
 * descriptions (bookworm main, `Translation-en`). Every package's long description is a
 * document (title: the package name); its one-line synopsis, written by a person to summarise
 * that description, is the query; the package is the one relevant document (the
 * "title as query" known-item construction). The Debian texts are not in the repository:
 * `debian-lists.ts` has apt fetch them into a private folder and this builds the collection in
 * memory, the same on every machine that reads the same release.
 *
 * Construction (`knownItemCollection`):
 * - packages whose long description is identical to an earlier package's (by name) are dropped,
 *   so no query has a copy of its answer; bodies under `minBodyWords` words are dropped;
 * - a synopsis is a query only if no other package has the same synopsis (case-insensitive), it
 *   has at least 3 distinct analysed terms (the service answers queries of 1–2 terms by prefix
 *   and fuzzy matching without RM3, a different path from Vaswani's ~7-term queries), and at most `maxSharing` documents hold most (¾) of
 *   those terms ("transitional dummy package", "debug symbols for …" identify nothing);
 * - queries are taken in the order of the SHA-1 of the package name until `queries` are found.
 *
 * Weakness: one relevant document per query, so nDCG@10 is close to MRR@10 and rewards the
 * first rank only; near-identical siblings (`foo` and `foo-data` sharing most of a description)
 * stay and count as wrong answers.
 */

/** One package's entry of a `Translation-en` file. */
export interface Description {
  readonly pkg: string;
  readonly synopsis: string;
  /** The long description, paragraphs joined (Debian's " ." separators dropped). */
  readonly body: string;
}

/** Parses a `Translation-en` (or `Packages`) file's `Package` and `Description(-en)` fields. */
export function parseDescriptions(text: string): Description[] {
  const out: Description[] = [];
  for (const stanza of text.split(/\n\s*\n/)) {
    let pkg = '';
    let synopsis: string | undefined;
    const body: string[] = [];
    let inDescription = false;
    for (const line of stanza.split('\n')) {
      if (line.startsWith(' ') || line.startsWith('\t')) {
        if (inDescription) {
          const t = line.trim();
          if (t !== '.') body.push(t);
        }
        continue;
      }
      inDescription = false;
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const key = line.slice(0, colon);
      const value = line.slice(colon + 1).trim();
      if (key === 'Package') pkg = value;
      else if (key === 'Description-en' || key === 'Description') {
        synopsis = value;
        inDescription = true;
      }
    }
    if (pkg && synopsis !== undefined) out.push({ pkg, synopsis, body: body.join(' ').replace(/\s+/g, ' ').trim() });
  }
  return out;
}

export interface KnownItemOptions {
  /** Queries to draw (fewer if fewer qualify). */
  readonly queries: number;
  /** Documents shorter than this many words are dropped. */
  readonly minBodyWords: number;
  /** Queries with fewer distinct analysed terms are dropped. */
  readonly minQueryTerms: number;
  /** A query is dropped when more documents than this hold ¾ of its distinct terms. */
  readonly maxSharing: number;
}

export const KNOWN_ITEM_DEFAULTS: KnownItemOptions = {
  queries: 1000,
  minBodyWords: 15,
  minQueryTerms: 3,
  maxSharing: 50,
};

/** Item id of a package. */
export const packageItemId = (pkg: string): string => `deb-${pkg}`;

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

/** The known-item collection of `descriptions` (see the module comment), in the shape of the Vaswani loader's. */
export function knownItemCollection(
  descriptions: readonly Description[],
  options: Partial<KnownItemOptions> = {},
): Vaswani {
  const o = { ...KNOWN_ITEM_DEFAULTS, ...options };
  const byName = new Map<string, Description>();
  for (const d of descriptions) if (!byName.has(d.pkg)) byName.set(d.pkg, d);
  const sorted = [...byName.values()].sort((a, b) => (a.pkg < b.pkg ? -1 : a.pkg > b.pkg ? 1 : 0));
  const bodies = new Set<string>();
  const docs: Description[] = [];
  for (const d of sorted) {
    if (d.body.split(' ').length < o.minBodyWords || bodies.has(d.body)) continue;
    bodies.add(d.body);
    docs.push(d);
  }
  const items: VaswaniItem[] = docs.map((d) => ({
    id: packageItemId(d.pkg),
    type: 'article',
    title: d.pkg,
    body: d.body,
  }));

  const a = new Analyzer();
  // Documents of each analysed term (title and body), for the sharing filter.
  const postings = new Map<string, number[]>();
  items.forEach((item, i) => {
    for (const t of new Set([...a.analyze(item.title), ...a.analyze(item.body)]))
      (postings.get(t) ?? postings.set(t, []).get(t)!).push(i);
  });
  const synopsisCount = new Map<string, number>();
  for (const d of byName.values()) {
    const key = d.synopsis.toLowerCase();
    synopsisCount.set(key, (synopsisCount.get(key) ?? 0) + 1);
  }
  const queries: Vaswani['queries'] = [];
  const qrels: Vaswani['qrels'] = new Map();
  const hits = new Uint16Array(items.length);
  for (const d of [...docs].sort((x, y) => (sha1(x.pkg) < sha1(y.pkg) ? -1 : 1))) {
    if (queries.length >= o.queries) break;
    if (synopsisCount.get(d.synopsis.toLowerCase()) !== 1) continue;
    const terms = [...new Set(a.analyze(d.synopsis))];
    if (terms.length < o.minQueryTerms) continue;
    const touched: number[] = [];
    for (const t of terms) {
      for (const i of postings.get(t) ?? []) {
        if (!hits[i]) touched.push(i);
        hits[i]++;
      }
    }
    const need = Math.ceil(0.75 * terms.length);
    const sharing = touched.filter((i) => hits[i] >= need).length;
    for (const i of touched) hits[i] = 0;
    if (sharing > o.maxSharing) continue;
    const qid = d.pkg;
    queries.push({ qid, text: d.synopsis });
    qrels.set(qid, new Map([[packageItemId(d.pkg), 1]]));
  }
  return { items, queries, qrels };
}
