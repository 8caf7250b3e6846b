import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadFolder } from '../content/parse/folder-loader';
import { validateItem, type ItemInput } from '../content/item';

/** One demo article: a section of the project's own documentation. */
export type DemoItem = ItemInput & { readonly id: string };

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

/**
 * The demo corpus: README.md and docs/*.md of `root`, split into section articles by the loader
 * of `npm run ingest` (with `--sections`) and validated as ingest validates. Throws when a
 * section is not a valid item: the project's own docs must load.
 */
export function loadDemoContent(root: string = projectRoot()): DemoItem[] {
  const load = loadFolder(root, { files: demoDocuments(root), sections: true });
  if (load.failed.length)
    throw new Error(`demo content: ${load.failed.map((f) => `${f.file}: ${f.reason}`).join('; ')}`);
  return load.items.map(({ file, item }) => {
    const v = validateItem(item);
    if (!v.ok)
      throw new Error(`demo content: ${file} (${String(item.id)}): ${v.issues[0]?.field}: ${v.issues[0]?.message}`);
    return v.item;
  });
}
