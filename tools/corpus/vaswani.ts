import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Where the collection lives: `VASWANI_DIR`, else `shared/eval/vaswani` beside the repository. */
export function vaswaniDir(): string {
  return process.env.VASWANI_DIR ?? resolve(__dirname, '..', '..', '..', 'shared', 'eval', 'vaswani');
}

/** A document of the collection as the service ingests it. */
export interface VaswaniItem {
  readonly id: string;
  readonly type: 'article';
  readonly title: string;
  readonly body: string;
}

/** One topic. */
export interface VaswaniQuery {
  readonly qid: string;
  readonly text: string;
}

/** The whole collection. */
export interface Vaswani {
  readonly items: VaswaniItem[];
  readonly queries: VaswaniQuery[];
  /** qid → (item id → grade). */
  readonly qrels: Map<string, Map<string, number>>;
}

/** Item id of a TREC docno. */
export const itemId = (docno: string): string => `doc-${docno}`;

/**
 * Title and body of an NPL abstract. The documents carry their original title as the text
 * before the first double space (four in five do); otherwise the first line is taken. The
 * title is never repeated in the body, so no word is counted twice.
 */
export function splitTitle(text: string): { title: string; body: string } {
  const lines = text
    .trim()
    .split('\n')
    .map((l) => l.trim());
  const flat = lines.join('\n');
  const dbl = flat.search(/ {2,}/);
  if (dbl > 0) {
    const title = flat.slice(0, dbl).replace(/\n/g, ' ').trim();
    if (title.split(' ').length <= 25) return { title, body: flat.slice(dbl).replace(/\s+/g, ' ').trim() };
  }
  return { title: lines[0], body: lines.slice(1).join(' ').trim() };
}

/** Parses `<DOC><DOCNO>n</DOCNO>text</DOC>`. `fullText` puts all text in the body (for plain BM25). */
export function parseDocs(trec: string, opts: { fullText?: boolean } = {}): VaswaniItem[] {
  const out: VaswaniItem[] = [];
  for (const m of trec.matchAll(/<DOC>\s*<DOCNO>\s*(\S+?)\s*<\/DOCNO>([\s\S]*?)<\/DOC>/g)) {
    const text = m[2].trim();
    if (opts.fullText)
      out.push({ id: itemId(m[1]), type: 'article', title: `NPL ${m[1]}`, body: text.replace(/\s+/g, ' ') });
    else out.push({ id: itemId(m[1]), type: 'article', ...splitTitle(text) });
  }
  return out;
}

/** Parses `<top><num>n</num><title>…</title></top>`. */
export function parseQueries(trec: string): VaswaniQuery[] {
  const out: VaswaniQuery[] = [];
  for (const m of trec.matchAll(/<top>\s*<num>\s*(\S+?)\s*<\/num>\s*<title>([\s\S]*?)<\/title>/g)) {
    out.push({ qid: m[1], text: m[2].replace(/\s+/g, ' ').trim().toLowerCase() });
  }
  return out;
}

/** Parses TREC qrels lines `qid 0 docno grade`. */
export function parseQrels(text: string): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 4) continue;
    const [qid, , docno, grade] = f;
    if (!out.has(qid)) out.set(qid, new Map());
    out.get(qid)!.set(itemId(docno), Number(grade));
  }
  return out;
}

/** Loads the collection from `dir`. */
export function loadVaswani(dir = vaswaniDir(), opts: { fullText?: boolean } = {}): Vaswani {
  return {
    items: parseDocs(readFileSync(join(dir, 'doc-text.trec'), 'utf8'), opts),
    queries: parseQueries(readFileSync(join(dir, 'query-text.trec'), 'utf8')),
    qrels: parseQrels(readFileSync(join(dir, 'qrels'), 'utf8')),
  };
}
