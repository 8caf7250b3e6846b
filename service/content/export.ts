import { ITEM_TYPES, type Item, type ItemType } from './item';

/** Which items an export holds. */
export type ExportScope = ItemType | 'all';
/** How an export is written. */
export type ExportFormat = 'json' | 'ndjson' | 'md';

/** One downloadable export. */
export interface ExportSpec {
  readonly name: string;
  readonly scope: ExportScope;
  readonly format: ExportFormat;
  readonly contentType: string;
}

const CONTENT_TYPES: Record<ExportFormat, string> = {
  json: 'application/json; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
};

const PLURAL: Record<ItemType, string> = { article: 'articles', project: 'projects', experience: 'experiences' };
const HEADINGS: Record<ItemType, string> = { article: 'Articles', project: 'Projects', experience: 'Experiences' };

/**
 * Every export, by name. A requested name is looked up here and nowhere else: it never becomes
 * a path, so `../`, encoded slashes or absolute paths cannot reach a file.
 */
export const EXPORTS: ReadonlyMap<string, ExportSpec> = new Map(
  [
    ...ITEM_TYPES.flatMap((t) =>
      (['json', 'ndjson'] as const).map((f) => ({ name: `${PLURAL[t]}.${f}`, scope: t as ExportScope, format: f })),
    ),
    { name: 'all.json', scope: 'all' as ExportScope, format: 'json' as const },
    { name: 'all.ndjson', scope: 'all' as ExportScope, format: 'ndjson' as const },
    { name: 'all.md', scope: 'all' as ExportScope, format: 'md' as const },
  ].map((e) => [e.name, { ...e, contentType: CONTENT_TYPES[e.format] }]),
);

function itemMarkdown(item: Item): string {
  const meta = [
    `- id: \`${item.id}\``,
    item.date ? `- date: ${item.date}` : undefined,
    item.url ? `- url: <${item.url}>` : undefined,
    item.tags.length ? `- tags: ${item.tags.join(', ')}` : undefined,
    `- updated: ${item.updated_at}`,
  ].filter((l): l is string => l !== undefined);
  const parts = [`## ${item.title.replace(/\n/g, ' ')}`, meta.join('\n')];
  if (item.summary)
    parts.push(
      item.summary
        .split('\n')
        .map((l) => `> ${l}`)
        .join('\n'),
    );
  if (item.body.trim()) parts.push(item.body.trim());
  return parts.join('\n\n');
}

/**
 * Longest chunk `exportChunks` yields, in UTF-16 code units (at most 3 bytes each in UTF-8). Small
 * items are gathered into one chunk up to this size; a large one is cut into pieces of it.
 */
export const EXPORT_CHUNK_CHARS = 64 * 1024;

/**
 * Cuts `text` into pieces of at most `EXPORT_CHUNK_CHARS`, never between the two halves of a
 * surrogate pair (each piece is encoded to UTF-8 on its own: a split pair would become two
 * U+FFFD and the bytes would differ from the whole text's).
 */
function* pieces(text: string): Generator<string> {
  let at = 0;
  while (text.length - at > EXPORT_CHUNK_CHARS) {
    let end = at + EXPORT_CHUNK_CHARS;
    const c = text.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff) end--;
    yield text.slice(at, end);
    at = end;
  }
  yield at === 0 ? text : text.slice(at);
}

/** Gathers strings into chunks of at most `EXPORT_CHUNK_CHARS`, cutting long ones (`pieces`). */
export function* chunked(parts: Iterable<string>): Generator<string> {
  let pending = '';
  for (const part of parts) {
    if (pending.length + part.length <= EXPORT_CHUNK_CHARS) {
      pending += part;
      continue;
    }
    if (pending) yield pending;
    pending = '';
    if (part.length <= EXPORT_CHUNK_CHARS) pending = part;
    else yield* pieces(part);
  }
  if (pending) yield pending;
}

/** The parts of an export in order, one item's text at a time (whose size an item's limits bound). */
function* parts(spec: ExportSpec, items: readonly Item[]): Generator<string> {
  switch (spec.format) {
    case 'json':
      // `JSON.stringify(items, null, 2)` one element at a time: an element is its own
      // pretty-printed text indented by two more spaces (string values never hold a raw newline).
      if (!items.length) {
        yield '[]\n';
        return;
      }
      yield '[\n';
      for (let i = 0; i < items.length; i++) {
        yield `${i ? ',\n' : ''}  ${JSON.stringify(items[i], null, 2).replace(/\n/g, '\n  ')}`;
      }
      yield '\n]\n';
      return;
    case 'ndjson':
      for (const i of items) yield `${JSON.stringify(i)}\n`;
      return;
    case 'md':
      yield '# Site content';
      for (const t of ITEM_TYPES) {
        let first = true;
        for (const i of items) {
          if (i.type !== t) continue;
          if (first) yield `\n\n# ${HEADINGS[t]}`;
          first = false;
          yield `\n\n${itemMarkdown(i)}`;
        }
      }
      yield '\n';
      return;
  }
}

/**
 * An export of `items` (already in order: by type, newest first) as a sequence of chunks of at
 * most `EXPORT_CHUNK_CHARS`, produced as they are asked for: memory is one item's text and one
 * chunk, whatever the corpus size, and nothing is ever one string of the whole export (which V8
 * caps at 2^29 - 24 characters). Concatenated, the chunks are byte for byte what the whole-string
 * rendering gave: JSON is an array of items (uploadable again as a `.json` file), pretty-printed
 * with two spaces; NDJSON one item per line; Markdown one section per type and one `##` section
 * per item.
 */
export function exportChunks(spec: ExportSpec, items: readonly Item[]): Generator<string> {
  return chunked(parts(spec, items));
}

/** The whole export as one string (small corpora and tests; the route streams `exportChunks`). */
export function renderExport(spec: ExportSpec, items: readonly Item[]): string {
  let out = '';
  for (const c of exportChunks(spec, items)) out += c;
  return out;
}
