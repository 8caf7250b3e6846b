import matter from 'gray-matter';
import type { ItemType } from './item';

/** File formats `/api/upload` accepts. */
export type UploadFormat = 'md' | 'txt' | 'json' | 'ndjson';

/** Accepted extensions and their format. */
export const UPLOAD_EXTENSIONS: Readonly<Record<string, UploadFormat>> = {
  '.md': 'md',
  '.markdown': 'md',
  '.txt': 'txt',
  '.json': 'json',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
};

/** A file that could not be read as items; `line` is 1-based where it applies. */
export class FileParseError extends Error {
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(message);
    this.name = 'FileParseError';
  }
}

/** The format of a file name, or undefined when its extension is not accepted. */
export function formatOf(filename: string): UploadFormat | undefined {
  const m = /(\.[A-Za-z0-9]+)$/.exec(filename);
  return m ? UPLOAD_EXTENSIONS[m[1].toLowerCase()] : undefined;
}

/** Defaults a file's items take when they do not say. */
export interface FileDefaults {
  /** Type of `.md`/`.txt` items without one (form field `type`). @default 'article' */
  readonly type?: ItemType;
}

// gray-matter can evaluate JavaScript front matter (`---js`); content is data, never code.
const refuse = () => {
  throw new Error('only YAML or JSON front matter is accepted');
};
const MATTER_OPTIONS = { engines: { js: refuse, javascript: refuse, coffee: refuse, coffeescript: refuse, cson: refuse } };

function stem(filename: string): string {
  const base = filename.replace(/^.*[\\/]/, '');
  return base.replace(/\.[^.]+$/, '').replace(/[-_]+/g, ' ').trim() || base;
}

/** YAML turns `2024-01-05` into a Date; items keep dates as strings. */
function yamlValue(v: unknown): unknown {
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) return String(v);
    const iso = v.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  return v;
}

function fromMarkdown(filename: string, text: string, defaults: FileDefaults): unknown {
  let parsed: { data: Record<string, unknown>; content: string };
  try {
    parsed = matter(text, MATTER_OPTIONS as Parameters<typeof matter>[1]);
  } catch (e) {
    throw new FileParseError(`front matter is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parsed.data ?? {})) data[k] = yamlValue(v);
  let body = parsed.content.replace(/^\s*\n/, '');
  // A leading `# Heading` is the title when the front matter has none, and is dropped when it
  // repeats the front matter's title.
  const h = /^\s*#\s+(.+?)\s*#*\s*(\n|$)/.exec(body);
  if (data.title === undefined) {
    data.title = h ? h[1] : stem(filename);
    if (h) body = body.slice(h[0].length);
  } else if (h && typeof data.title === 'string' && h[1].trim().toLowerCase() === data.title.trim().toLowerCase()) {
    body = body.slice(h[0].length);
  }
  if (typeof data.tags === 'string') data.tags = data.tags.split(',').map((t) => t.trim()).filter(Boolean);
  return { type: defaults.type ?? 'article', ...data, body: body.trim() };
}

function fromText(filename: string, text: string, defaults: FileDefaults): unknown {
  const normalized = text.replace(/\r\n?/g, '\n').replace(/^\uFEFF/, '');
  const lines = normalized.split('\n');
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first < 0) return { type: defaults.type ?? 'article', title: stem(filename), body: '' };
  // The first non-empty line is the title when it reads like one; else the file name is.
  const candidate = lines[first].trim();
  if (candidate.length <= 200) {
    return { type: defaults.type ?? 'article', title: candidate, body: lines.slice(first + 1).join('\n').trim() };
  }
  return { type: defaults.type ?? 'article', title: stem(filename), body: normalized.trim() };
}

function fromJson(text: string): unknown[] {
  let v: unknown;
  try {
    v = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new FileParseError(`not valid JSON: ${(e as Error).message}`);
  }
  if (Array.isArray(v)) return v;
  if (v && typeof v === 'object' && Array.isArray((v as { items?: unknown }).items)) return (v as { items: unknown[] }).items;
  return [v];
}

function fromNdjson(text: string): unknown[] {
  const out: unknown[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === '') continue;
    try {
      out.push(JSON.parse(lines[i]));
    } catch (e) {
      throw new FileParseError(`line ${i + 1} is not valid JSON: ${(e as Error).message}`, i + 1);
    }
  }
  return out;
}

/**
 * Turns one uploaded file into raw items (validated later, like ingested ones): a `.md` file
 * (YAML front matter + body) or a `.txt` file is one item; `.json` is an item, an array of
 * items or `{items: [...]}`; `.ndjson` is one item per line.
 */
export function parseFile(filename: string, format: UploadFormat, text: string, defaults: FileDefaults = {}): unknown[] {
  switch (format) {
    case 'md':
      return [fromMarkdown(filename, text, defaults)];
    case 'txt':
      return [fromText(filename, text, defaults)];
    case 'json':
      return fromJson(text);
    case 'ndjson':
      return fromNdjson(text);
  }
}
