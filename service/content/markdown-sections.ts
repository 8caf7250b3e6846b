import { basename } from 'node:path';
import type { ItemInput } from './item';

/** One section of a Markdown document as an item (validated like any other before it is stored). */
export type SectionItem = ItemInput & { readonly id: string };

/** GitHub-style anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function slugPart(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50)
    .replace(/-+$/g, '');
}

/**
 * Splits one Markdown document into articles, one per `##` section (the text before the first
 * `##` becomes an article titled by the `#` heading). `path` is the document's path relative to
 * the project root, e.g. `docs/rate-limiting.md`; it names the tags and the section URLs.
 */
export function markdownSections(path: string, text: string): SectionItem[] {
  const stem = basename(path, '.md');
  const lines = text.split(/\r?\n/);
  const docTitle = lines.find((l) => /^# /.test(l))?.slice(2).trim() ?? stem;
  const sections: { heading?: string; body: string[] }[] = [{ body: [] }];
  let inFence = false;
  for (const line of lines) {
    if (/^(```|~~~)/.test(line)) inFence = !inFence;
    if (!inFence && /^## /.test(line)) {
      sections.push({ heading: line.slice(3).trim(), body: [] });
    } else if (!(!inFence && /^# /.test(line))) {
      sections[sections.length - 1].body.push(line);
    }
  }
  const fileSlug = slugPart(path.replace(/\.md$/, ''));
  const tags = ['docs', stem.toLowerCase()];
  const items: SectionItem[] = [];
  const seen = new Set<string>();
  for (const s of sections) {
    const body = s.body.join('\n').trim();
    if (!body) continue;
    let id = s.heading ? `${fileSlug}-${slugPart(s.heading) || 'section'}` : fileSlug;
    for (let n = 2; seen.has(id); n++) id = `${fileSlug}-${slugPart(s.heading ?? '')}-${n}`;
    seen.add(id);
    items.push({
      id,
      type: 'article',
      title: s.heading ? `${docTitle}: ${s.heading}` : docTitle,
      body,
      tags,
      url: s.heading ? `/${path}#${headingAnchor(s.heading)}` : `/${path}`,
    });
  }
  return items;
}
