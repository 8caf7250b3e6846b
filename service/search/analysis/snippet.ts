import type { Analyzer, TokenSpan } from './analyzer';
import { isSpace } from '../../content/char-class';

/** Options of `buildSnippet`. */
export interface SnippetOptions {
  /** Longest snippet, characters of text (markup excluded). @default 200 */
  readonly maxChars?: number;
}

/**
 * How much of a text one snippet reads, whatever the text's length (issue 29): a search's work
 * is bounded by the page it returns, so 100 hits of 1 MB cost what 100 hits of a few KB do.
 * Items are short next to these; only long ones lose anything (a better passage further in).
 */
export const SNIPPET_SCAN = {
  /** The first matching word must start within this many characters, or this text gives no snippet. */
  firstMatchWithin: 16_384,
  /** Windows are looked for among the matches this far past the first one (at least 4 × maxChars). */
  afterFirstMatch: 2_048,
  /** `leadSnippet` reads at most this many characters. */
  leadWithin: 16_384,
} as const;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** HTML-escapes text. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/**
 * Text shortened to at most `max` characters at a word boundary, with an ellipsis; whitespace
 * runs count as one space. Reads the text only until it has `max + 1` characters of that (at
 * most `SNIPPET_SCAN.leadWithin`), so a 1 MB text costs what a short one does.
 */
function lead(text: string, max: number): string {
  const n = Math.min(text.length, SNIPPET_SCAN.leadWithin);
  let flat = '';
  let space = false;
  let i = 0;
  while (i < n && flat.length <= max) {
    if (isSpace(text.charCodeAt(i))) {
      space = flat.length > 0;
      while (i < n && isSpace(text.charCodeAt(i))) i++;
      continue;
    }
    if (space) flat += ' ';
    space = false;
    const from = i;
    while (i < n && !isSpace(text.charCodeAt(i)) && flat.length + (i - from) <= max) i++;
    flat += text.slice(from, i);
  }
  // `i` is where reading stopped; the rest may be whitespace only (then `flat` is all of it).
  let rest = i;
  while (rest < n && isSpace(text.charCodeAt(rest))) rest++;
  const whole = rest >= text.length;
  if (whole && flat.length <= max) return escapeHtml(flat);
  if (flat.length <= max) return `${escapeHtml(flat.trimEnd())}…`;
  const cut = flat.slice(0, max);
  const at = cut.lastIndexOf(' ');
  return `${escapeHtml(cut.slice(0, at > max / 2 ? at : max).trimEnd())}…`;
}

/**
 * A snippet of `text` around its best passage for the query: the window of words holding the
 * most distinct matching terms (then the most matches, then the earliest). Matching words are
 * wrapped in `<mark>…</mark>`; everything else is HTML-escaped, so the snippet can be shown as
 * HTML as is. `isMatch` receives each word's index term. Returns undefined when nothing matches
 * within `SNIPPET_SCAN.firstMatchWithin` characters.
 *
 * Bounded work: the text is read up to its first match plus `SNIPPET_SCAN.afterFirstMatch`
 * (and one snippet's length more, for the window's edges), never further; windows start at the
 * matches within that stretch.
 */
export function buildSnippet(
  text: string,
  analyzer: Analyzer,
  isMatch: (term: string) => boolean,
  opts: SnippetOptions = {},
): string | undefined {
  const maxChars = opts.maxChars ?? 200;
  const spans: TokenSpan[] = [];
  const hits: Array<{ span: TokenSpan; term: string }> = [];
  // Windows start at hits before `windowsUntil`; words are read up to `readUntil`.
  let windowsUntil = SNIPPET_SCAN.firstMatchWithin;
  let readUntil = windowsUntil;
  let windowHits = 0;
  // A text this short is read whole at once (cheaper than chunks); a longer one chunk by chunk.
  const words = text.length <= SNIPPET_SCAN.firstMatchWithin ? analyzer.spans(text) : analyzer.spansLazily(text);
  for (const span of words) {
    if (span.start >= readUntil) break;
    spans.push(span);
    const term = analyzer.term(span.token);
    if (!term || !isMatch(term)) continue;
    if (!hits.length) {
      windowsUntil = span.start + Math.max(SNIPPET_SCAN.afterFirstMatch, 4 * maxChars);
      readUntil = windowsUntil + maxChars;
    }
    hits.push({ span, term });
    if (span.start < windowsUntil) windowHits = hits.length;
  }
  if (!hits.length) return undefined;

  // Best window [i..j] of hits spanning at most maxChars characters.
  let best = { i: 0, j: 0, distinct: 0, count: 0 };
  for (let i = 0; i < windowHits; i++) {
    const terms = new Set<string>();
    let j = i;
    for (; j < hits.length && hits[j].span.end - hits[i].span.start <= maxChars; j++) terms.add(hits[j].term);
    const count = j - i;
    if (terms.size > best.distinct || (terms.size === best.distinct && count > best.count)) {
      best = { i, j: j - 1, distinct: terms.size, count };
    }
  }
  const first = hits[best.i].span;
  const last = hits[best.j].span;
  // Centre the matched stretch in the window, then move the edges to word boundaries.
  const slack = Math.max(0, maxChars - (last.end - first.start));
  let start = Math.max(0, first.start - Math.floor(slack / 3));
  let end = Math.min(text.length, start + maxChars);
  if (end - start < maxChars) start = Math.max(0, end - maxChars);
  const wordStart = spans.find((s) => s.end > start);
  if (start > 0 && wordStart && wordStart.start >= start) start = wordStart.start;
  else if (start > 0 && wordStart) start = Math.min(wordStart.end, first.start);
  // The last ". " at most 42 characters before the start (the only ones that can move it).
  const from = Math.max(0, start - 42);
  const dot = text.slice(from, first.start + 2).lastIndexOf('. ');
  const sentence = dot < 0 ? -1 : from + dot;
  if (sentence >= 0 && sentence + 2 >= start - 40 && sentence + 2 <= first.start) start = sentence + 2;
  let lastWord: TokenSpan | undefined;
  for (let k = spans.length - 1; k >= 0 && !lastWord; k--) if (spans[k].end <= end) lastWord = spans[k];
  if (end < text.length && lastWord && lastWord.end >= last.end) end = lastWord.end;
  end = Math.max(end, last.end);

  const marked = new Set(hits.slice(best.i, best.j + 1).map((h) => h.span.start));
  for (const h of hits) if (h.span.start >= start && h.span.end <= end) marked.add(h.span.start);
  let out = '';
  let pos = start;
  for (const s of spans) {
    if (s.start < start || s.end > end || !marked.has(s.start)) continue;
    out += escapeHtml(text.slice(pos, s.start)) + `<mark>${escapeHtml(text.slice(s.start, s.end))}</mark>`;
    pos = s.end;
  }
  out += escapeHtml(text.slice(pos, end));
  out = out.replace(/\s+/g, ' ').trim();
  return `${start > 0 ? '…' : ''}${out}${end < text.length ? '…' : ''}`;
}

/** The snippet when nothing in the text matches: its beginning. */
export function leadSnippet(text: string, maxChars = 200): string {
  return lead(text, maxChars);
}
