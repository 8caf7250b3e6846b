import fc from 'fast-check';
import { compareNewestFirst, type Item, type ItemType } from '../../../../service/content/item';
import { SortedListing } from '../../../../service/content/listing/sorted-listing';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

const TYPES: readonly ItemType[] = ['article', 'project', 'experience'];

function item(id: string, type: ItemType, day: number, updated: number, dated: boolean): Item {
  const created_at = `2026-01-${String(1 + (day % 28)).padStart(2, '0')}T00:00:00.000Z`;
  return {
    id,
    type,
    title: id,
    body: '',
    tags: [],
    created_at,
    updated_at: `2026-02-01T00:00:${String(updated % 60).padStart(2, '0')}.000Z`,
    ...(dated ? { date: `2025-12-${String(1 + (day % 28)).padStart(2, '0')}` } : {}),
  } as Item;
}

describe('SortedListing', () => {
  it(
    'after any sequence of writes, deletions and reads, lists exactly what a full sort of the in-memory copy gives',
    () => {
      const write = fc.record({
        id: fc.integer({ min: 0, max: 40 }),
        type: fc.constantFrom(...TYPES),
        day: fc.integer({ min: 0, max: 6 }),
        updated: fc.integer({ min: 0, max: 4 }),
        dated: fc.boolean(),
      });
      const step = fc.oneof(
        fc.array(write, { minLength: 1, maxLength: 6 }).map((w) => ({ write: w })),
        fc.constant({ read: true as const }),
        fc.integer({ min: 0, max: 40 }).map((id) => ({ remove: `item-${id}` })),
      );
      fc.assert(
        fc.property(
          fc.constantFrom<ItemType | 'all'>('all', ...TYPES),
          fc.array(step, { maxLength: 30 }),
          (scope, steps) => {
            const copy = new Map<string, Item>();
            const order = { article: 0, project: 1, experience: 2 };
            const compare =
              scope === 'all'
                ? (a: Item, b: Item) => order[a.type] - order[b.type] || compareNewestFirst(a, b)
                : compareNewestFirst;
            const listing = new SortedListing(compare, (i) => scope === 'all' || i.type === scope);
            const read = () =>
              listing.items(
                () => copy.values(),
                (id) => copy.get(id),
              );
            const expected = () => [...copy.values()].filter((i) => scope === 'all' || i.type === scope).sort(compare);
            let handedOut: { items: readonly Item[]; copy: Item[] } | undefined;
            for (const s of steps) {
              if ('write' in s) {
                for (const w of s.write) {
                  const i = item(`item-${w.id}`, w.type, w.day, w.updated, w.dated);
                  listing.mark(i.id, copy.get(i.id));
                  copy.set(i.id, i);
                }
              } else if ('remove' in s) {
                listing.mark(s.remove, copy.get(s.remove));
                copy.delete(s.remove);
              } else {
                const items = read();
                expect(items.map((i) => i.id)).toEqual(expected().map((i) => i.id));
                // A listing handed out earlier is not changed by later merges.
                if (handedOut) expect(handedOut.items).toEqual(handedOut.copy);
                handedOut = { items, copy: [...items] };
              }
            }
            expect(read().map((i) => i.id)).toEqual(expected().map((i) => i.id));
          },
        ),
        { numRuns: 300 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it(
    'prepared and settled in steps, with writes, deletions and reads between any two of their steps, lists exactly what a full sort gives; prepared or settled undisturbed, the next read compares nothing',
    async () => {
      const write = fc.record({
        id: fc.integer({ min: 0, max: 30 }),
        type: fc.constantFrom(...TYPES),
        day: fc.integer({ min: 0, max: 6 }),
        updated: fc.integer({ min: 0, max: 4 }),
        dated: fc.boolean(),
      });
      const change = fc.oneof(
        fc.array(write, { minLength: 1, maxLength: 4 }).map((w) => ({ write: w })),
        fc.integer({ min: 0, max: 30 }).map((id) => ({ remove: `item-${id}` })),
        fc.constant({ read: true as const }),
      );
      const step = fc.oneof(
        change,
        fc.record({ settle: fc.array(change, { maxLength: 4 }), every: fc.integer({ min: 1, max: 6 }) }),
        fc.record({ prepare: fc.array(change, { maxLength: 4 }), every: fc.integer({ min: 1, max: 6 }) }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom<ItemType | 'all'>('all', ...TYPES),
          fc.array(step, { maxLength: 20 }),
          async (scope, steps) => {
            const copy = new Map<string, Item>();
            const order = { article: 0, project: 1, experience: 2 };
            let comparisons = 0;
            const compare = (a: Item, b: Item) => {
              comparisons++;
              return (scope === 'all' ? order[a.type] - order[b.type] : 0) || compareNewestFirst(a, b);
            };
            const listing = new SortedListing(compare, (i) => scope === 'all' || i.type === scope);
            let built = false;
            const read = () => {
              built = true;
              return listing.items(
                () => copy.values(),
                (id) => copy.get(id),
              );
            };
            const expected = () =>
              [...copy.values()]
                .filter((i) => scope === 'all' || i.type === scope)
                .sort(compare)
                .map((i) => i.id);
            type Change =
              | { write: Array<{ id: number; type: ItemType; day: number; updated: number; dated: boolean }> }
              | { remove: string }
              | { read: true };
            const run = (c: Change) => {
              if ('write' in c)
                for (const w of c.write) {
                  const i = item(`item-${w.id}`, w.type, w.day, w.updated, w.dated);
                  listing.mark(i.id, copy.get(i.id));
                  copy.set(i.id, i);
                }
              else if ('remove' in c) {
                listing.mark(c.remove, copy.get(c.remove));
                copy.delete(c.remove);
              } else expect(read().map((i) => i.id)).toEqual(expected());
            };
            for (const s of steps) {
              if ('prepare' in s) {
                // The first read's sort in steps (a listing already read returns at once), the
                // changes run between its steps; prepared undisturbed, the next read compares nothing.
                const between = [...s.prepare];
                const unread = !built;
                let calls = 0;
                await listing.prepare(
                  () => copy.values(),
                  () => {
                    if (++calls % s.every === 0 && between.length) run(between.shift()!);
                    return undefined;
                  },
                );
                between.forEach(run);
                if (unread) built = true;
                if (unread && !s.prepare.length) {
                  comparisons = 0;
                  const ids = read().map((i) => i.id);
                  expect(comparisons).toBe(0);
                  expect(ids).toEqual(expected());
                }
                continue;
              }
              if (!('settle' in s)) {
                run(s);
                continue;
              }
              // The changes run between steps of the settling, one every `every` of its step checks.
              const between = [...s.settle];
              let calls = 0;
              await listing.settle(
                (id) => copy.get(id),
                () => {
                  if (++calls % s.every === 0 && between.length) run(between.shift()!);
                  return undefined;
                },
              );
              between.forEach(run);
              if (!s.settle.length && built) {
                // (A listing never read has nothing to settle: its first read sorts.)
                comparisons = 0;
                const ids = read().map((i) => i.id);
                expect(comparisons).toBe(0);
                expect(ids).toEqual(expected());
              }
            }
            expect(read().map((i) => i.id)).toEqual(expected());
          },
        ),
        { numRuns: 300 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('a read after a write does not sort the in-memory copy again: it compares the written items and merges them in', () => {
    const copy = new Map<string, Item>();
    for (let n = 0; n < 10_000; n++) {
      const i = item(`item-${n}`, 'article', n % 28, n % 60, false);
      copy.set(i.id, i);
    }
    let comparisons = 0;
    const listing = new SortedListing(
      (a, b) => {
        comparisons++;
        return compareNewestFirst(a, b);
      },
      () => true,
    );
    const read = () =>
      listing.items(
        () => copy.values(),
        (id) => copy.get(id),
      );
    read();
    const fullSort = comparisons;
    const changed = { ...item('item-5', 'article', 0, 0, false), created_at: '2026-03-01T00:00:00.000Z' };
    listing.mark(changed.id, copy.get(changed.id));
    copy.set(changed.id, changed);
    comparisons = 0;
    expect(read()[0].id).toBe('item-5');
    // Two binary searches (the replaced item's place, the new one's), not a sort (~N log N).
    expect(comparisons).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(copy.size + 1)) + 2);
    expect(fullSort).toBeGreaterThan(10 * copy.size);
  });

  it('a replaced item not found where its sort key says (told the wrong previous item) is still taken out: one linear pass instead', () => {
    const copy = new Map<string, Item>();
    for (let n = 0; n < 50; n++) {
      const i = item(`item-${n}`, 'article', n % 28, n % 60, false);
      copy.set(i.id, i);
    }
    const listing = new SortedListing(compareNewestFirst, () => true);
    const read = () =>
      listing.items(
        () => copy.values(),
        (id) => copy.get(id),
      );
    read();
    const replaced = copy.get('item-7')!;
    listing.mark('item-7', { ...replaced, created_at: '1999-01-01T00:00:00.000Z' });
    copy.set('item-7', { ...replaced, created_at: '2026-03-01T00:00:00.000Z' });
    const ids = read().map((i) => i.id);
    expect(ids[0]).toBe('item-7');
    expect(ids.filter((id) => id === 'item-7')).toHaveLength(1);
    expect(ids).toEqual([...copy.values()].sort(compareNewestFirst).map((i) => i.id));
  });

  it(
    'a first read places the items with a catalogue rank by it, without comparing them, and merges the rest in: the order of a full sort',
    () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.tuple(
              fc.integer({ min: 0, max: 9 }),
              fc.integer({ min: 0, max: 3 }),
              fc.constantFrom('one', 'another', 'none'),
            ),
            { maxLength: 60 },
          ),
          (specs) => {
            const items = specs.map(([day, updated], n) => item(`item-${n}`, 'article', day, updated, n % 3 === 0));
            // Ranks as a catalogue holds them: places in the full order of every item it held.
            const rank = new Map<string, number>();
            [...items].sort(compareNewestFirst).forEach((i, r) => rank.set(i.id, r));
            const catalogues: Record<string, object> = { one: {}, another: {} };
            const kindOf = (i: Item) => specs[Number(i.id.slice('item-'.length))][2];
            // Only the ranks of one catalogue compare (the first seen): the other's items are merged in.
            const placed = specs.find((x) => x[2] !== 'none')?.[2];
            let compared = 0;
            const listing = new SortedListing(
              (a, b) => {
                if (kindOf(a) === placed && kindOf(b) === placed) compared++;
                return compareNewestFirst(a, b);
              },
              () => true,
              (i) => (kindOf(i) === 'none' ? undefined : { of: catalogues[kindOf(i)], rank: rank.get(i.id)! }),
            );
            expect(
              listing
                .items(
                  () => items,
                  () => undefined,
                )
                .map((i) => i.id),
            ).toEqual([...items].sort(compareNewestFirst).map((i) => i.id));
            expect(compared).toBe(0);
          },
        ),
        { numRuns: 300 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});
