import fc from 'fast-check';
import { ITEM_TYPES, type ItemType } from '../../../service/content/item';
import { DocAttributeTable, NO_TYPE, TYPE_CODE } from '../../../service/search/doc-attributes';
import { TagDictionary } from '../../../service/search/tag-dictionary';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

/*
 * The documents' attributes by row (issue 40): rows entered, entered again (a slot a later
 * document takes), in any order, read back as last entered, through the compactions of the tag
 * pool that rows entered again leave holes in.
 */

const TAGS = ['a', 'B', 'c', 'Delta', 'e', 'f'];

const entryArb = fc.record({
  row: fc.nat(40),
  type: fc.constantFrom<ItemType | 'podcast'>(...ITEM_TYPES, 'podcast'),
  tags: fc.array(fc.constantFrom(...TAGS), { maxLength: 6 }),
  day: fc.integer({ min: 0, max: 20301231 }),
  updated: fc.double({ noNaN: false }),
});

describe('DocAttributeTable', () => {
  it(
    'reads every row back as it was last entered, the pool compacted or not',
    () => {
      fc.assert(
        fc.property(fc.array(entryArb, { maxLength: 3000 }), (entries) => {
          const table = new DocAttributeTable(new TagDictionary());
          const last = new Map<number, (typeof entries)[number]>();
          for (const e of entries) {
            table.enterAttributes(e.row, e.type as ItemType, e.tags, e.day, e.updated);
            last.set(e.row, e);
          }
          for (let row = 0; row <= 41; row++) {
            const e = last.get(row);
            expect(table.entered(row)).toBe(e !== undefined);
            if (!e) continue;
            const tags = [...table.tags.subarray(table.tagStart[row], table.tagEnd[row])].map(
              (c) => table.dictionary.names[c],
            );
            expect({
              row,
              type: table.types[row],
              tags,
              day: table.days[row],
              updated: table.updated[row],
            }).toEqual({
              row,
              type: TYPE_CODE.get(e.type as ItemType) ?? NO_TYPE,
              tags: e.tags.map((t) => t.toLowerCase()),
              day: e.day,
              updated: e.updated,
            });
          }
        }),
        { numRuns: 60 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('compacts its tag pool once rows entered again leave more holes than live codes', () => {
    const table = new DocAttributeTable(new TagDictionary());
    for (let round = 0; round < 200; round++)
      for (let row = 0; row < 10; row++) table.enterAttributes(row, 'article', ['x', 'y', 'z'], 0, 0);
    // 6,000 codes entered, 30 live: the pool stays near the live codes, not the entered ones.
    expect(table.tags.length).toBeLessThan(4096);
    for (let row = 0; row < 10; row++) expect(table.tagEnd[row] - table.tagStart[row]).toBe(3);
  });
});
