import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { slugify, type ItemType } from '../item';
import { markdownSections } from './markdown-sections';
import { formatOf, parseFile, type UploadFormat } from './parse-files';

/** One item read from a file, not yet validated (the service validates it as any other input). */
export interface LoadedItem {
  /** The file, relative to the folder. */
  readonly file: string;
  readonly item: Record<string, unknown>;
}

/** What `loadFolder` read. */
export interface FolderLoad {
  readonly items: LoadedItem[];
  /** Files that could not be parsed, with the parser's reason. */
  readonly failed: Array<{ readonly file: string; readonly reason: string }>;
  /** Files read. */
  readonly files: number;
}

/** Options of `loadFolder`. */
export interface FolderLoadOptions {
  /** Type of `.md`/`.txt` items without one. @default 'article' */
  readonly type?: ItemType;
  /**
   * Split Markdown files into one item per `##` section (titles, tags, URLs to the section
   * anchors), as the demo does with this project's docs; else one item per file, as `/api/upload`.
   * @default false
   */
  readonly sections?: boolean;
  /** Read these files (relative to the folder) instead of walking it. */
  readonly files?: readonly string[];
}

/** Supported files under `dir`, sorted, skipping dot-folders and node_modules. */
function walk(dir: string, root = dir): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.') || name === 'node_modules') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p, root));
    else if (formatOf(name)) out.push(relative(root, p));
  }
  return out;
}

/** A stable id per file: the path relative to the folder (so loading twice makes no duplicates). */
function stableId(rel: string, index: number, count: number): string {
  const base =
    slugify(
      rel
        .split(sep)
        .join(' ')
        .replace(/\.[^.]+$/, ''),
    ) || 'item';
  return count > 1 ? `${base}-${index + 1}` : base;
}

/**
 * Reads a folder of content files into items with the parsers of `/api/upload` (`.md` with front
 * matter, `.txt`, `.json`, `.ndjson`), each with a stable id: its own `id`, else one from its
 * path. The one loader of `npm run ingest` and of the demo content, so the demo runs the path
 * users run.
 */
export function loadFolder(dir: string, opts: FolderLoadOptions = {}): FolderLoad {
  const items: LoadedItem[] = [];
  const failed: Array<{ file: string; reason: string }> = [];
  const files = opts.files ?? walk(dir);
  for (const rel of files) {
    try {
      const text = readFileSync(join(dir, rel), 'utf8');
      const format = formatOf(rel) as UploadFormat;
      if (opts.sections && format === 'md') {
        for (const item of markdownSections(rel.split(sep).join('/'), text))
          items.push({ file: rel, item: { ...item } });
        continue;
      }
      const parsed = parseFile(rel, format, text, { type: opts.type ?? 'article' });
      parsed.forEach((raw, i) => {
        const item = { ...(raw as Record<string, unknown>) };
        if (typeof item.id !== 'string' || !item.id) item.id = stableId(rel, i, parsed.length);
        items.push({ file: rel, item });
      });
    } catch (e) {
      failed.push({ file: rel, reason: e instanceof Error ? e.message : String(e) });
    }
  }
  return { items, failed, files: files.length };
}
