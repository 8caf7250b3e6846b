/**
 * The text passes written as chains of regular expressions (markdown to plain text, the heading
 * pattern, snippets, markdown sections), as they were before issue 29 made them linear; kept
 * verbatim as the reference that the linear versions are compared with: equivalence tests (on
 * inputs where these finish quickly) and the side-by-side benchmark. Never used by the service.
 */
import { basename } from 'node:path';
import type { ItemInput } from '../../service/content/item';
import type { Analyzer, TokenSpan } from '../../service/search/analysis/analyzer';
import { escapeHtml } from '../../service/search/analysis/snippet';

/** `plainText` before issue 29: a chain of regular expressions, some quadratic (`^\s*` with /gm, `[^\]]*`, `[^>]*`). */
export function plainTextBefore(markdown: string): string {
  return markdown
    .replace(/\r\n?/g, '\n')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/^\s*(```|~~~).*$/gm, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/^\s*\[[^\]]+\]:\s+\S+.*$/gm, ' ')
    .replace(/<https?:\/\/[^>\s]+>/g, ' ')
    .replace(/<\/?[a-zA-Z][^>]*>/g, ' ')
    .replace(/^\s{0,3}(#{1,6}|>+|[-*+]|\d+[.)])\s+/gm, '')
    .replace(/^\s*([-*_]\s*){3,}$/gm, ' ')
    .replace(/(\*\*|__|~~|`+)/g, '')
    .replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/gm, '$1$2')
    .replace(
      /&(nbsp|amp|lt|gt|quot|#39);/g,
      (_m, e: string) => ({ nbsp: ' ', amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e] ?? ' ',
    )
    .replace(/\|/g, ' ')
    .replace(/[ \t\f\v]+/g, ' ')
    .replace(/\s*\n\s*/g, '\n')
    .trim();
}

/** The leading-heading pattern of `parse-files.ts` before issue 29 (cubic on a heading of spaces). */
export const HEADING_BEFORE = /^\s*#\s+(.+?)\s*#*\s*(\n|$)/;

/** Text shortened to at most `max` characters at a word boundary, with an ellipsis. */
function leadBefore(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return escapeHtml(flat);
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${escapeHtml(cut.slice(0, space > max / 2 ? space : max).trimEnd())}…`;
}

/**
 * `buildSnippet` before issue 29: tokenises the whole text, however long. A snippet of `text` around its best passage for the query: the window of words holding the
 * most distinct matching terms (then the most matches, then the earliest). Matching words are
 * wrapped in `<mark>…</mark>`; everything else is HTML-escaped, so the snippet can be shown as
 * HTML as is. `isMatch` receives each word's index term. Returns undefined when nothing matches.
 */
export function buildSnippetBefore(
  text: string,
  analyzer: Analyzer,
  isMatch: (term: string) => boolean,
  opts: { readonly maxChars?: number } = {},
): string | undefined {
  const maxChars = opts.maxChars ?? 200;
  const spans = analyzer.spans(text);
  const hits: Array<{ span: TokenSpan; term: string }> = [];
  for (const span of spans) {
    const term = analyzer.term(span.token);
    if (term && isMatch(term)) hits.push({ span, term });
  }
  if (!hits.length) return undefined;

  // Best window [i..j] of hits spanning at most maxChars characters.
  let best = { i: 0, j: 0, distinct: 0, count: 0 };
  for (let i = 0; i < hits.length; i++) {
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
  const sentence = text.lastIndexOf('. ', first.start);
  if (sentence >= 0 && sentence + 2 >= start - 40 && sentence + 2 <= first.start) start = sentence + 2;
  const lastWord = [...spans].reverse().find((s) => s.end <= end);
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

/** `leadSnippet` before issue 29: flattens the whole text. */
export function leadSnippetBefore(text: string, maxChars = 200): string {
  return leadBefore(text, maxChars);
}

/** `markdownSections` before issue 29 (one string per line and regular-expression tests per line; linear but slow). */
function headingAnchorBefore(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
function slugPartBefore(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50)
    .replace(/-+$/g, '');
}
export function markdownSectionsBefore(path: string, text: string): Array<ItemInput & { id: string }> {
  const stem = basename(path, '.md');
  const lines = text.split(/\r?\n/);
  const docTitle =
    lines
      .find((l) => /^# /.test(l))
      ?.slice(2)
      .trim() ?? stem;
  const sections: { heading?: string; body: string[] }[] = [{ body: [] }];
  let inFence = false;
  for (const line of lines) {
    if (/^(```|~~~)/.test(line)) inFence = !inFence;
    if (!inFence && /^## /.test(line)) sections.push({ heading: line.slice(3).trim(), body: [] });
    else if (!(!inFence && /^# /.test(line))) sections[sections.length - 1].body.push(line);
  }
  const fileSlug = slugPartBefore(path.replace(/\.md$/, ''));
  const tags = ['docs', stem.toLowerCase()];
  const items: Array<ItemInput & { id: string }> = [];
  const seen = new Set<string>();
  for (const s of sections) {
    const body = s.body.join('\n').trim();
    if (!body) continue;
    let id = s.heading ? `${fileSlug}-${slugPartBefore(s.heading) || 'section'}` : fileSlug;
    for (let n = 2; seen.has(id); n++) id = `${fileSlug}-${slugPartBefore(s.heading ?? '')}-${n}`;
    seen.add(id);
    items.push({
      id,
      type: 'article',
      title: s.heading ? `${docTitle}: ${s.heading}` : docTitle,
      body,
      tags,
      url: s.heading ? `/${path}#${headingAnchorBefore(s.heading)}` : `/${path}`,
    });
  }
  return items;
}
