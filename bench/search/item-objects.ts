/**
 * Heap objects and bytes per item as the service holds items (issue 40: what a full collection
 * marks), for the items of the filters bench (`attributedCorpus`' attributes): parsed from their
 * record with the plain text kept (`plain`: how the content service held them before packing) or
 * packed (lazy-item.ts). Per form, in one process: a heap snapshot with the items held and one
 * without (after a full collection), the node count's difference per item by node type; V8's used
 * heap and external memory per item; and the CPU µs per item of packing, of a parse per use (a
 * field read of each item in turn, as an index build reads them) and of `JSON.parse` of the record.
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/search/item-objects.ts [items, 20000]
 */
import { getHeapSnapshot, getHeapStatistics } from 'node:v8';
import type { Item, ItemType } from '../../service/content/item';
import { packItem } from '../../service/content/lazy-item';
import { keepPlainText, plainText } from '../../service/content/plain-text';
import { growCorpus, mulberry32 } from '../../tools/corpus/grow-corpus';
import { loadVaswani } from '../../tools/corpus/vaswani';
import { collectGarbage } from '../collect-garbage';

/** Node counts of a heap snapshot, by node type. */
async function nodeCounts(): Promise<Map<string, number>> {
  const chunks: Buffer[] = [];
  for await (const c of getHeapSnapshot()) chunks.push(c as Buffer);
  const snap = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
  };
  const { node_fields: fields, node_types: types } = snap.snapshot.meta;
  const typeAt = fields.indexOf('type');
  const out = new Map<string, number>();
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const t = types[0][snap.nodes[i + typeAt]];
    out.set(t, (out.get(t) ?? 0) + 1);
  }
  return out;
}

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 20_000);
  const v = loadVaswani();
  const r = mulberry32(40);
  // The filters bench's attributes (filters.ts), each item parsed from JSON as a store's record is.
  const records = growCorpus(v.items, n).map((i) => {
    const x = r();
    const type: ItemType = x < 0.6 ? 'article' : x < 0.9 ? 'project' : 'experience';
    const tags = Array.from({ length: Math.floor(r() * 4) }, () => `tag-${Math.floor(r() * 40)}`);
    const day = new Date(Date.UTC(2016, 0, 1) + Math.floor(r() * 3650) * 86_400_000).toISOString();
    return JSON.stringify({
      ...i,
      type,
      tags: [...new Set(tags)],
      date: day.slice(0, 10),
      created_at: day,
      updated_at: day,
    });
  });
  const texts = records.map((s) => plainText((JSON.parse(s) as Item).body));
  const parsedItem = (k: number): Item => {
    const item = JSON.parse(records[k]) as Item;
    keepPlainText(item, texts[k]);
    return item;
  };
  for (const form of ['plain', 'packed'] as const) {
    collectGarbage(2);
    const without = await nodeCounts();
    collectGarbage(2);
    const before = getHeapStatistics();
    const beforeExternal = process.memoryUsage().external;
    const t0 = cpuUs();
    let items: Item[] | undefined = [];
    for (let k = 0; k < n; k++) items.push(form === 'plain' ? parsedItem(k) : packItem(parsedItem(k)));
    const makeUs = (cpuUs() - t0) / n;
    collectGarbage(2);
    const after = getHeapStatistics();
    const external = process.memoryUsage().external - beforeExternal;
    // Counted before any field is read (the parses kept, `PARSES_KEPT`, would be a fifth of 20,000).
    const held = await nodeCounts();
    const t1 = cpuUs();
    let chars = 0;
    for (const item of items) chars += item.title.length;
    const readUs = (cpuUs() - t1) / n;
    const per: string[] = [];
    let total = 0;
    for (const [t, c] of held) {
      const d = (c - (without.get(t) ?? 0)) / n;
      total += d;
      if (Math.abs(d) >= 0.05) per.push(`${t} ${d.toFixed(2)}`);
    }
    console.log(
      `${form}: ${total.toFixed(2)} heap objects per item (${per.join(', ')}); used heap ${((after.used_heap_size - before.used_heap_size) / n).toFixed(0)} B, external ${(external / n).toFixed(0)} B per item; made in ${makeUs.toFixed(2)} µs CPU per item (parse of the record${form === 'packed' ? ' and packing' : ''}); a field read of each in turn ${readUs.toFixed(2)} µs per item (${chars} chars)`,
    );
    items = undefined;
  }
  // JSON.parse of the records alone, for scale.
  const t2 = cpuUs();
  for (const s of records) JSON.parse(s);
  console.log(
    `JSON.parse of a record: ${((cpuUs() - t2) / n).toFixed(2)} µs CPU per item; mean record ${(records.reduce((a, s) => a + s.length, 0) / n).toFixed(0)} chars`,
  );
}

void main();
