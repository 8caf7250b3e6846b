import { ITEM_TYPES, type Item, type ItemType } from '../../service/content/item';
import type { ExportSpec } from '../../service/content/export';

/**
 * The export as it was rendered before it streamed (one string of the whole export, verbatim from
 * service/content/export.ts before issue 29): the reference the streamed bytes are compared with.
 */

const HEADINGS: Record<ItemType, string> = { article: 'Articles', project: 'Projects', experience: 'Experiences' };

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

export function legacyRenderExport(spec: ExportSpec, items: readonly Item[]): string {
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
