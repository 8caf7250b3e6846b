import type { ProximitySource } from '../../../../service/search/index/cursor';
import type { Item } from '../../../../service/content/item';
import { CompactIndex } from '../../../../service/search/index/compact-index';
import { EmbeddedIndex } from '../../../../service/search/embedded-index';
import { MAX_QUERY_PAIRS, proximityRerank, queryPairs } from '../../../../service/search/scoring/proximity';
import { atOnce } from '../../../../service/lib/yield-to-loop';
import { DEFAULT_RANKING } from '../../../../service/search/ranking';

const at = '2026-01-01T00:00:00.000Z';
const item = (id: string, body: string): Item => ({
  id,
  type: 'article',
  title: 'notes',
  body,
  tags: [],
  created_at: at,
  updated_at: at,
});
// Both hold the same terms as often, in documents of the same length: only their order differs.
const ITEMS = [
  item('a', 'beam optics with a laser, described'),
  item('b', 'laser beam optics, described'),
  item('c', 'unrelated water bread text'),
];

async function index(weight: number): Promise<EmbeddedIndex> {
  const i = new EmbeddedIndex({ proximity: { ...DEFAULT_RANKING.proximity, weight } });
  await i.replaceAll(ITEMS);
  return i;
}

describe('proximity in ranking', () => {
  it('puts the document holding the query words side by side first; off, the two tie (by id)', async () => {
    const q = { text: 'laser beam optics', limit: 10, offset: 0, snippets: false };
    const off = (await (await index(0)).search(q)).hits;
    expect(off.map((h) => h.id)).toEqual(['a', 'b']);
    expect(off[0].score).toBe(off[1].score);
    const on = (await (await index(4)).search(q)).hits;
    expect(on.map((h) => h.id)).toEqual(['b', 'a']);
    expect(on[0].score).toBeGreaterThan(off[0].score);
  });

  it('leaves short queries (prefix and fuzzy matching, two terms or fewer) as they were', async () => {
    const q = { text: 'laser beam', limit: 10, offset: 0, snippets: false };
    expect((await (await index(4)).search(q)).hits).toEqual((await (await index(0)).search(q)).hits);
  });

  it("finds a pair's window frequency a step at a time (a query yields between steps), once per base segment", () => {
    const c = new CompactIndex(['text'], { positions: 'text' });
    for (let i = 0; i < 5000; i++) c.load(`d${i}`, [i % 2 ? ['laser', 'beam'] : ['beam', 'x', 'x', 'x', 'laser']]);
    c.seal();
    const source = c.proximitySource()!;
    const count = (job: Generator<void, { o: number; u: number }>) => {
      let steps = 0;
      for (let r = job.next(); ; r = job.next(), steps++) if (r.done) return { steps, df: r.value };
    };
    const first = count(source.windowDf(source.termId('laser')!, source.termId('beam')!, 4));
    expect(first.df).toEqual({ o: 2500, u: 2500 });
    expect(first.steps).toBeGreaterThanOrEqual(4);
    expect(count(source.windowDf(source.termId('laser')!, source.termId('beam')!, 4)).steps).toBe(0);
    expect(count(source.windowDf(source.termId('laser')!, source.termId('beam')!, 8)).df).toEqual({ o: 2500, u: 5000 });
  });

  it('gives two replicas holding the same items the same page, whatever their segments (one built at once; one from a base, appends and a replacement)', async () => {
    const words = ['laser', 'beam', 'optics', 'water', 'light', 'bread', 'wave', 'field'];
    // Deterministic scatter: every document holds several of the words in its own order.
    const doc = (n: number, salt = 0) =>
      item(
        `d${n}`,
        Array.from(
          { length: 12 },
          (_, k) => words[(Math.imul(n * 31 + k + salt, 0x9e3779b1) >>> 28) % words.length],
        ).join(' '),
      );
    const items = Array.from({ length: 400 }, (_, n) => doc(n));
    const once = new EmbeddedIndex({});
    await once.replaceAll(items);
    const grown = new EmbeddedIndex({});
    await grown.replaceAll(items.slice(0, 150).map((i) => (i.id === 'd7' ? doc(7, 5) : i)));
    for (let at = 150; at < 400; at += 50) await grown.upsert(items.slice(at, at + 50));
    await grown.upsert([items[7]]);
    await grown.remove(['d9']);
    await grown.upsert([items[9]]);
    await grown.settled();
    const off = new EmbeddedIndex({ proximity: { ...DEFAULT_RANKING.proximity, weight: 0 } });
    await off.replaceAll(items);
    let moved = 0;
    for (const text of ['laser beam optics', 'water light bread wave', 'field wave beam laser optics']) {
      const q = { text, limit: 10, offset: 0, snippets: false };
      const page = (await once.search(q)).hits;
      expect((await grown.search(q)).hits).toEqual(page);
      if (JSON.stringify(page) !== JSON.stringify((await off.search(q)).hits)) moved++;
    }
    // The pages are proximity's: they differ from the same index's with proximity off.
    expect(moved).toBeGreaterThan(0);
  });

  it('pairs adjacent distinct terms once each, in query order', () => {
    expect(queryPairs(['a', 'b', 'b', 'c', 'a', 'b'])).toEqual([
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'a'],
    ]);
    // At most MAX_QUERY_PAIRS, the first ones: a long query's work stays bounded.
    const long = Array.from({ length: 40 }, (_, i) => `t${i}`);
    expect(queryPairs(long)).toEqual(long.slice(0, MAX_QUERY_PAIRS).map((t, i) => [t, long[i + 1]]));
  });

  it('re-scores only the top depth: hits below it keep their place and score', () => {
    const source: ProximitySource = {
      termId: (t) => ({ x: 0, y: 1 })[t],
      documents: () => 10,
      averageLength: () => 5,
      length: () => 5,
      windows: (_d, _a, _b, _w, out) => Object.assign(out, { o: 1, u: 1 }),
      *windowDf() {
        return { o: 2, u: 3 };
      },
    };
    const hits = [3, 2, 1, 0.5].map((score, i) => ({ id: `h${i}`, score }));
    const out = atOnce(
      proximityRerank(source, ['x', 'y'], hits, [0, 1, 2, 3], { weight: 1, window: 4, depth: 2 }, 0.5),
    );
    expect(out.slice(2)).toEqual(hits.slice(2));
    expect(out[0].score).toBeGreaterThan(3);
  });
});
