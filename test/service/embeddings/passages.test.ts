import type { Item } from '../../../service/content/item';
import { PASSAGE_CHARS } from '../../../service/content/sentences';
import { itemPassages } from '../../../service/embeddings';

const item = (over: Partial<Item> = {}): Item => ({
  id: 'cars',
  type: 'article',
  title: 'Cars',
  body: '',
  tags: [],
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  ...over,
});

const sentence = (i: number) => `Sentence number ${i} tells of engines, wheels and roads at some length.`;
const LONG = Array.from({ length: 200 }, (_, i) => sentence(i)).join(' ');

describe('itemPassages', () => {
  it('packs the summary then the body, in order, into passages of at most PASSAGE_CHARS led by the title', () => {
    const p = itemPassages(item({ summary: 'About cars.', body: `# Cars\n\n${LONG}` }), 100);
    expect(p.passages.length).toBeGreaterThan(10);
    for (const text of p.passages) {
      expect(text.startsWith('Cars\n')).toBe(true);
      expect(text.length - 'Cars\n'.length).toBeLessThanOrEqual(PASSAGE_CHARS);
    }
    const joined = p.passages.map((t) => t.slice('Cars\n'.length)).join(' ');
    expect(joined).toBe(`About cars. Cars ${LONG}`);
  });

  it('stops at maxPassages', () => {
    expect(itemPassages(item({ body: LONG }), 3).passages).toHaveLength(3);
  });

  it('gives the title alone to an item without text, and splits a sentence longer than a passage at words', () => {
    expect(itemPassages(item(), 5).passages).toEqual(['Cars']);
    const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const p = itemPassages(item({ body: words }), 10);
    expect(p.passages.length).toBeGreaterThan(1);
    expect(p.passages.map((t) => t.slice(5)).join(' ')).toBe(words);
    const run = 'x'.repeat(2000);
    expect(itemPassages(item({ body: run }), 10).passages.map((t) => t.slice(5).length)).toEqual([800, 800, 400]);
  });

  it('is stable for one content version; its text hash follows the texts only, its version the item', () => {
    const a = itemPassages(item({ body: LONG }), 32);
    expect(itemPassages(item({ body: LONG }), 32)).toEqual(a);
    const retagged = itemPassages(item({ body: LONG, tags: ['x'], updated_at: '2026-02-01T00:00:00.000Z' }), 32);
    expect(retagged.textHash).toBe(a.textHash);
    expect(retagged.version).not.toBe(a.version);
    expect(itemPassages(item({ body: `${LONG} One more.` }), 32).textHash).not.toBe(a.textHash);
    expect(itemPassages(item({ body: LONG, title: 'Autos' }), 32).textHash).not.toBe(a.textHash);
    expect(a.textHash).toMatch(/^[0-9a-f]{64}$/);
  });
});
