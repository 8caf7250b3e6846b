import fc from 'fast-check';
import { compareNewestFirst, type Item, type ItemType } from '../../../../service/content/item';
import { TagIndex } from '../../../../service/content/listing/tag-index';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

const TYPES: readonly ItemType[] = ['article', 'project', 'experience'];
const TAGS = ['Red', 'red', 'RED', 'Blue', 'green', 'Ünïcode', 'ünïcode'];

function item(id: string, type: ItemType, day: number, updated: number, tags: readonly string[]): Item {
  return {
    id,
    type,
    title: id,
    body: '',
    tags,
    created_at: `2026-01-${String(1 + (day % 28)).padStart(2, '0')}T00:00:00.000Z`,
    updated_at: `2026-02-01T00:00:${String(updated % 60).padStart(2, '0')}.000Z`,
  };
}

/** The filter the index replaces: the type's items, newest first, with the tag (case-insensitive). */
const naive = (copy: ReadonlyMap<string, Item>, type: ItemType, tag: string) =>
  [...copy.values()]
    .filter((i) => i.type === type && i.tags.some((t) => t.toLowerCase() === tag.toLowerCase()))
    .sort(compareNewestFirst)
    .map((i) => i.id);

describe('TagIndex', () => {
  it(
    'after any sequence of writes (tags and types changing), deletions and reads, lists exactly what the naive filter gives',
    () => {
      const write = fc.record({
        id: fc.integer({ min: 0, max: 30 }),
        type: fc.constantFrom(...TYPES),
        day: fc.integer({ min: 0, max: 5 }),
        updated: fc.integer({ min: 0, max: 3 }),
        tags: fc.uniqueArray(fc.constantFrom(...TAGS), { maxLength: 3 }),
      });
      const step = fc.oneof(
        { weight: 3, arbitrary: fc.array(write, { minLength: 1, maxLength: 5 }).map((w) => ({ write: w })) },
        { weight: 3, arbitrary: fc.constantFrom(...TAGS, 'absent').map((tag) => ({ read: tag })) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 30 }).map((id) => ({ remove: `item-${id}` })) },
      );
      fc.assert(
        fc.property(fc.constantFrom(...TYPES), fc.array(step, { maxLength: 30 }), (type, steps) => {
          const copy = new Map<string, Item>();
          const index = new TagIndex(type, compareNewestFirst);
          const listing = () => [...copy.values()].filter((i) => i.type === type).sort(compareNewestFirst);
          const read = (tag: string) => index.items(tag, listing, (id) => copy.get(id)).map((i) => i.id);
          for (const s of steps) {
            if ('write' in s) {
              for (const w of s.write) {
                const i = item(`item-${w.id}`, w.type, w.day, w.updated, w.tags);
                index.mark(i.id, copy.get(i.id), i);
                copy.set(i.id, i);
              }
            } else if ('remove' in s) {
              index.mark(s.remove, copy.get(s.remove), undefined);
              copy.delete(s.remove);
            } else expect(read(s.read)).toEqual(naive(copy, type, s.read));
          }
          for (const tag of TAGS) expect(read(tag)).toEqual(naive(copy, type, tag));
        }),
        { numRuns: 300 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('a read after writes reads the type listing only to build: later reads do not walk it', () => {
    const copy = new Map<string, Item>();
    for (let k = 0; k < 100; k++)
      copy.set(`i-${k}`, item(`i-${k}`, 'article', k, 0, k % 10 === 0 ? ['Rare'] : ['common']));
    const index = new TagIndex('article', compareNewestFirst);
    let walks = 0;
    const listing = () => {
      walks++;
      return [...copy.values()].sort(compareNewestFirst);
    };
    expect(index.items('rare', listing, (id) => copy.get(id))).toHaveLength(10);
    const i = item('i-5', 'article', 5, 1, ['rare']);
    index.mark(i.id, copy.get(i.id), i);
    copy.set(i.id, i);
    expect(index.items('RARE', listing, (id) => copy.get(id)).map((x) => x.id)).toEqual(naive(copy, 'article', 'rare'));
    expect(walks).toBe(1);
  });
});
