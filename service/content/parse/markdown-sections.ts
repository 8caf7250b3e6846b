import { basename } from 'node:path';
import type { ItemInput } from '../item';

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
  // One pass over the lines with prefix tests, collecting each section's kept lines as runs of
  // the text (a 1 MB file of newlines is a million lines; one string per line took 250 ms).
  // `\r\n` becomes `\n`, as splitting on /\r?\n/ and joining with `\n` did.
  const src = text.replace(/\r\n/g, '\n');
  let docTitle: string | undefined;
  const sections: { heading?: string; body: string[] }[] = [{ body: [] }];
  let inFence = false;
  let runStart = -1;
  const endRun = (end: number) => {
    if (runStart >= 0) sections[sections.length - 1].body.push(src.slice(runStart, end));
    runStart = -1;
  };
  for (let pos = 0; pos <= src.length;) {
    let end = src.indexOf('\n', pos);
    if (end < 0) end = src.length;
    const h1 = src.startsWith('# ', pos);
    if (h1 && docTitle === undefined) docTitle = src.slice(pos + 2, end).trim();
    if (src.startsWith('```', pos) || src.startsWith('~~~', pos)) inFence = !inFence;
    if (!inFence && src.startsWith('## ', pos)) {
      endRun(pos - 1);
      sections.push({ heading: src.slice(pos + 3, end).trim(), body: [] });
    } else if (!inFence && h1) {
      endRun(pos - 1);
    } else if (runStart < 0) {
      runStart = pos;
    }
    pos = end + 1;
  }
  endRun(src.length);
  docTitle ??= stem;
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
