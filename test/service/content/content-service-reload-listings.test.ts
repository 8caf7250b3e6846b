import { ManualClock } from '../../helpers/manual-clock';
import { ContentService } from '../../../service/content/content-service';
import type { ContentStore, RemoteChangeHandlers, RestoreOutcome } from '../../../service/content/content-store';
import { compareNewestFirst, type Item, type ItemType } from '../../../service/content/item';
import { packItem } from '../../../service/content/lazy-item';
import { silentLogger } from '../../../service/lib/logger';
import { monitorEventLoop } from '../../../service/metrics/event-loop-delay';

/**
 * A reload keeps the listings and tag indexes, and marks in them only the ids whose record
 * changed or left: a shared store's items carry no catalogue rank, so a listing reset at each
 * reload sorted every item at the first read after it, in one turn (278 ms for the first
 * `list('article')`, 652 ms for the first `all()` at 200,000 items: bench/content/resync.ts).
 */

const TYPES: readonly ItemType[] = ['article', 'article', 'project'];
const TYPE_ORDER = { article: 0, project: 1, experience: 2 };

/** Record `n`; `version` > 0: changed (another body, dated a month on). */
function record(n: number, version = 0): Item {
  const day = `2026-${String(((n + version) % 12) + 1).padStart(2, '0')}-${String((n % 28) + 1).padStart(2, '0')}`;
  return {
    id: `item-${n}`,
    type: TYPES[n % TYPES.length],
    title: `Item ${n}`,
    body: version ? `Body of item ${n}, version ${version}.` : `Body of item ${n}.`,
    tags: [`Topic-${n % 20}`],
    date: day,
    created_at: `${day}T00:00:00.000Z`,
    updated_at: `${day}T00:00:00.000Z`,
  } as Item;
}

/**
 * A store of plain records whose every read makes new packed items of them (as the Redis store's
 * does); ids in `tombstones` were deleted (a reload drops them).
 */
class RecordStore implements ContentStore {
  readonly kind = 'kvstore' as const;
  readonly records = new Map<string, Item>();
  readonly tombstones = new Set<string>();
  handlers: RemoteChangeHandlers | undefined;
  async load(): Promise<Item[]> {
    await new Promise((r) => setImmediate(r));
    return [...this.records.values()].map(packItem);
  }
  async write(items: readonly Item[], removed: readonly string[] = []): Promise<void> {
    for (const i of items) this.records.set(i.id, i);
    for (const id of removed) this.records.delete(id);
  }
  async getMany(ids: readonly string[]): Promise<Item[]> {
    return ids.flatMap((id) => this.records.get(id) ?? []).map(packItem);
  }
  async restore(items: readonly Item[]): Promise<RestoreOutcome> {
    const gone = items.filter((i) => this.tombstones.has(i.id)).map((i) => i.id);
    return { written: [], deleted: gone };
  }
  onRemoteChange(handlers: RemoteChangeHandlers): void {
    this.handlers = handlers;
  }
  async close(): Promise<void> {}
}

/** The listing of `scope` sorted from scratch out of the in-memory copy (the ids `ids` may hold). */
function fromScratch(content: ContentService, ids: Iterable<string>, scope: ItemType | 'all'): Item[] {
  const held: Item[] = [];
  for (const id of ids) {
    const i = content.get(id);
    if (i && (scope === 'all' || i.type === scope)) held.push(i);
  }
  return held.sort(
    (a, b) => (scope === 'all' ? TYPE_ORDER[a.type] - TYPE_ORDER[b.type] : 0) || compareNewestFirst(a, b),
  );
}

/** Whether `listed` is `expected`, item for item (the very items held). */
function same(listed: readonly Item[], expected: readonly Item[]): boolean {
  return listed.length === expected.length && listed.every((i, k) => i === expected[k]);
}

/**
 * `work`'s value and the longest turn of the loop while it runs, ms of the loop thread's CPU (the
 * monitor reads a turn when its timer fires after it: a tick before and after).
 */
async function longestTurn<T>(work: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const loop = monitorEventLoop(5);
  await new Promise((r) => setTimeout(r, 20));
  loop.take();
  const value = await work();
  await new Promise((r) => setTimeout(r, 20));
  const held = loop.take();
  loop.stop();
  return { value, ms: held.busyMax * 1000 };
}

/** A content service started from a store of `n` records (items without a catalogue rank, as Redis's). */
async function started(n: number): Promise<{ n: number; store: RecordStore; content: ContentService; ids: string[] }> {
  const store = new RecordStore();
  for (let k = 0; k < n; k++) store.records.set(`item-${k}`, record(k));
  const content = new ContentService(store, new ManualClock(), silentLogger());
  await content.start();
  return { n, store, content, ids: [...store.records.keys()] };
}

describe('ContentService keeps its listings through a reload', () => {
  it('a reload of the same records hands out the very listings it did before; one of changed records, a sort from scratch, with no long turn (200,000 items)', async () => {
    const { n, store, content, ids } = await started(200_000);
    const all = content.all();
    const articles = content.all('article');
    const tagged = content.list('article', { limit: 10, offset: 0, tag: 'topic-3' });

    // The same records, new items of them (a blip of Redis): nothing to merge.
    await store.handlers!.resync();
    expect(content.all()).toBe(all);
    expect(content.all('article')).toBe(articles);
    expect(content.list('article', { limit: 10, offset: 0, tag: 'topic-3' })).toEqual(tagged);

    // 1% changed (moved by a month), 0.5% deleted elsewhere, one written while the reload runs.
    for (let k = 0; k < n; k += 100) store.records.set(`item-${k}`, record(k, 1));
    for (let k = 50; k < n; k += 200) {
      store.records.delete(`item-${k}`);
      store.tombstones.add(`item-${k}`);
    }
    const reload = store.handlers!.resync();
    await content.ingest([{ id: 'item-7', type: 'project', title: 'Written', body: 'Written during the reload.' }]);
    await reload;
    expect(content.get('item-7')?.title).toBe('Written');
    expect(content.size).toBe(n - n / 200);

    const { value, ms } = await longestTurn(async () => {
      const every = content.all();
      await new Promise((r) => setImmediate(r));
      const ofArticles = content.all('article');
      await new Promise((r) => setImmediate(r));
      return [every, ofArticles, content.list('article', { limit: n, offset: 0, tag: 'TOPIC-3' }).items] as const;
    });
    const [listed, listedArticles, listedTagged] = value;
    expect(same(listed, fromScratch(content, ids, 'all'))).toBe(true);
    expect(same(listedArticles, fromScratch(content, ids, 'article'))).toBe(true);
    const expectedTagged = fromScratch(content, ids, 'article').filter((i) => i.tags.includes('Topic-3'));
    expect(expectedTagged.length).toBeGreaterThan(0);
    expect(same(listedTagged, expectedTagged)).toBe(true);
    // Reset at the reload, the first `all()` sorted every item in one turn: 634-666 ms of CPU
    // (bench/content/resync.ts); merged at the read, 36-39 ms for 1% changed; merged by the reload
    // in steps (`settle`), the read only hands the listing out: 0 ms, the reload's turns <= 12 ms.
    // Judged in the CPU time of the longest turn, with room for GC on a loaded machine.
    expect(ms).toBeLessThan(250);
  }, 120_000);

  it('makes the first listings after a start ready in steps (`prepareListing`, as the listing routes do): the reads then hand them out (200,000 items)', async () => {
    const { content, ids } = await started(200_000);
    let turns = 0;
    let ticking = true;
    const tick = () => {
      if (!ticking) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    // One written while the listings are made: in them at the read.
    const { value, ms } = await longestTurn(async () => {
      const both = Promise.all([content.prepareListing('all'), content.prepareListing('article')]);
      await content.ingest([{ id: 'item-8', type: 'article', title: 'Written', body: 'Written while listing.' }]);
      await both;
      return [content.all(), content.all('article')] as const;
    });
    const [listed, articles] = value;
    ticking = false;
    expect(turns).toBeGreaterThan(10);
    expect(same(listed, fromScratch(content, ids, 'all'))).toBe(true);
    expect(same(articles, fromScratch(content, ids, 'article'))).toBe(true);
    expect(articles.some((i) => i.id === 'item-8' && i.title === 'Written')).toBe(true);
    // Items of a shared store carry no catalogue rank: the first `all()` sorted every item in one
    // turn, 640-689 ms of CPU at 200,000 (bench/content/resync.ts). Judged as above.
    expect(ms).toBeLessThan(250);
  }, 120_000);
});
