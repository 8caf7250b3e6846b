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
    ...ITEM_TYPES.flatMap((t) => (['json', 'ndjson'] as const).map((f) => ({ name: `${PLURAL[t]}.${f}`, scope: t as ExportScope, format: f }))),
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
  if (item.summary) parts.push(item.summary.split('\n').map((l) => `> ${l}`).join('\n'));
  if (item.body.trim()) parts.push(item.body.trim());
  return parts.join('\n\n');
}

/**
 * Renders an export of `items` (already in order: by type, newest first). JSON is an array of
 * items (uploadable again as a `.json` file); NDJSON one item per line; Markdown one section
 * per type and one `##` section per item.
 */
export function renderExport(spec: ExportSpec, items: readonly Item[]): string {
  switch (spec.format) {
    case 'json':
      return `${JSON.stringify(items, null, 2)}\n`;
    case 'ndjson':
      return items.map((i) => `${JSON.stringify(i)}\n`).join('');
    case 'md': {
      const sections: string[] = ['# Site content'];
      for (const t of ITEM_TYPES) {
        const of = items.filter((i) => i.type === t);
        if (!of.length) continue;
        sections.push(`# ${HEADINGS[t]}`, ...of.map(itemMarkdown));
      }
      return `${sections.join('\n\n')}\n`;
    }
  }
}
