import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ItemInput } from '../content/item';

/** One demo article: a section of the project's own documentation. */
export type DemoItem = ItemInput & { readonly id: string };

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
export function markdownSections(path: string, text: string): DemoItem[] {
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
  const items: DemoItem[] = [];
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

/** The project root: the nearest folder above `from` holding package.json (works from service/ and build/service/). */
export function projectRoot(from: string = __dirname): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'README.md'))) return dir;
    const up = dirname(dir);
    if (up === dir) return from;
    dir = up;
  }
}

/** The demo's documents, relative to `root`: README.md and docs/*.md, those that exist. */
export function demoDocuments(root: string = projectRoot()): string[] {
  const files = ['README.md'];
  const docs = join(root, 'docs');
  if (existsSync(docs)) {
    for (const f of readdirSync(docs).sort()) if (f.endsWith('.md')) files.push(`docs/${f}`);
  }
  return files.filter((f) => existsSync(join(root, f)));
}

/** The demo corpus: README.md and docs/*.md of `root`, split into section articles. */
export function loadDemoContent(root: string = projectRoot()): DemoItem[] {
  return demoDocuments(root).flatMap((f) => markdownSections(f, readFileSync(join(root, f), 'utf8')));
}
