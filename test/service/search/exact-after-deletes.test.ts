import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Item } from '../../../service/content/item';
import type { EmbeddedIndexOptions } from '../../../service/search/embedded-index';
import { SegmentStore } from '../../../service/search/index/segment-store';
import type { IndexQuery } from '../../../service/search/search-index';
import { ExhaustiveIndex } from '../../../tools/oracles/exhaustive-index';
import { capture } from '../../helpers/log-capture';
import { PROPERTY_HANG_GUARD_MS, PROPERTY_RUN_HANG_GUARD_MS } from '../../helpers/property';
import { searchQuery, TAGS, WORDS } from '../../helpers/search-arbitraries';

/*
 * Issue 39, "the index stays exact": after any interleaving of adds, replacements, patches and
 * deletes, the index ranks as an index built from the surviving items alone, to the last bit:
 * the same pages (ids, scores, totals, snippets), the same RM3 feedback documents and expanded
 * terms, the same proximity re-scoring; while merges run, once they are done, and after the
 * index is persisted and restored from its segment file (current, or behind the content).
 */

const at = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
const IDS = 16;

/** The fields an operation sets: an item's whole content (`put`), or some of them (`patch`). */
const fieldModel = {
  title: fc.array(fc.constantFrom(...WORDS), { maxLength: 3 }).map((w) => w.join(' ')),
  body: fc.array(fc.constantFrom(...WORDS), { maxLength: 24, size: 'max' }).map((w) => w.join(' ')),
  summary: fc.array(fc.constantFrom(...WORDS), { maxLength: 4 }).map((w) => w.join(' ')),
  tags: fc.subarray([...TAGS]),
  type: fc.constantFrom<Item['type']>('article', 'project'),
};
const fields = fc.record(fieldModel, { requiredKeys: ['title', 'body', 'tags', 'type'] });
type Fields = { title: string; body: string; summary?: string; tags: string[]; type: Item['type'] };

type Op =
  | { put: { id: number; fields: Fields } }
  | { patch: { id: number; fields: Partial<Fields> } }
  | { remove: number[] }
  | { tick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ id: fc.nat(IDS - 1), fields }).map((put) => ({ put })) },
  {
    weight: 2,
    arbitrary: fc
      .record({ id: fc.nat(IDS - 1), fields: fc.record(fieldModel, { requiredKeys: [] }) })
      .map((patch) => ({ patch })),
  },
  // A few ids at once, unknown ones (never added, or gone) included.
  { weight: 2, arbitrary: fc.array(fc.nat(IDS + 3), { minLength: 1, maxLength: 3 }).map((remove) => ({ remove })) },
  // Turns of the event loop: background merges go on (a new base swapped in, or one half built).
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 6 }).map((tick) => ({ tick })) },
);

/** Small merges, often (two documents appended or deleted start one), with RM3 on from the first document. */
const OPTS: EmbeddedIndexOptions = {
  minMergeDocs: 2,
  checkpointIdleMs: 0,
  expansion: { enabled: true, fbDocs: 3, fbTerms: 5, originalWeight: 0.5, minDocs: 1 },
};

/**
 * `got` ranks as `want` to the last bit for `queries`: pruned pages (ids, scores, totals,
 * snippets), exhaustive pages, the full ranking, and RM3's feedback documents and expanded terms.
 */
async function expectSameIndex(
  got: ExhaustiveIndex,
  want: ExhaustiveIndex,
  queries: ReadonlyArray<Omit<IndexQuery, 'snippets'>>,
): Promise<void> {
  expect(got.size()).toBe(want.size());
  for (const q of queries) {
    const query: IndexQuery = { ...q, snippets: true };
    const page = await got.search(query);
    expect(page).toEqual(await want.search(query));
    expect(got.exhaustive(query)).toEqual(page);
    expect(got.rank(query)).toEqual(want.rank(query));
    expect(got.feedback(query)).toEqual(want.feedback(query));
  }
}

/** The survivors, built into a fresh index (in the reverse of the order they were first added). */
async function builtFrom(survivors: ReadonlyMap<string, Item>): Promise<ExhaustiveIndex> {
  const index = new ExhaustiveIndex(OPTS);
  await index.replaceAll([...survivors.values()].reverse());
  return index;
}

describe('the index after adds, replacements, patches and deletes', () => {
  let dir: string;
  const stores: SegmentStore[] = [];
  const newStore = (at: string) => {
    const s = new SegmentStore({ dir: at, logger: capture().logger });
    stores.push(s);
    return s;
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'exact-deletes-'));
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'ranks as the index built from the survivors, to the last bit: while merges run, after them, and restored from its segment',
    async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(op, { minLength: 1, maxLength: 60, size: 'max' }),
          fc.array(searchQuery, { minLength: 1, maxLength: 4 }),
          async (ops, queries) => {
            const home = join(dir, `run-${run++}`);
            try {
              const live = new ExhaustiveIndex({ ...OPTS, segments: newStore(home) });
              await live.replaceAll([]);
              const survivors = new Map<string, Item>();
              let clock = 0;
              for (const o of ops) {
                if ('put' in o) {
                  const id = `d${o.put.id}`;
                  const old = survivors.get(id);
                  const it: Item = {
                    id,
                    ...o.put.fields,
                    created_at: old?.created_at ?? at(clock),
                    updated_at: at(++clock),
                  };
                  await live.upsert([it]);
                  survivors.delete(id);
                  survivors.set(id, it);
                } else if ('patch' in o) {
                  // A patch: the fields given replace the stored ones, the others are kept.
                  const old = survivors.get(`d${o.patch.id}`);
                  if (!old) continue;
                  const it: Item = { ...old, ...o.patch.fields, updated_at: at(++clock) };
                  await live.upsert([it]);
                  survivors.set(it.id, it);
                } else if ('remove' in o) {
                  const ids = o.remove.map((n) => `d${n}`);
                  await live.remove(ids);
                  for (const id of ids) survivors.delete(id);
                } else for (let i = 0; i < o.tick; i++) await new Promise((r) => setImmediate(r));
              }
              const want = await builtFrom(survivors);
              // Merges may be under way: the old base, tombstones, the frozen and the fresh appended segment.
              await expectSameIndex(live, want, queries);
              await live.pruned.settled();
              await expectSameIndex(live, want, queries);

              // The segment the last merge wrote, behind the content: restored, then the changes replayed.
              const behind = join(dir, `run-${run}-behind`);
              cpSync(home, behind, { recursive: true });
              const replayed = new ExhaustiveIndex({ ...OPTS, segments: newStore(behind) });
              await replayed.replaceAll([...survivors.values()]);
              await expectSameIndex(replayed, want, queries);
              await replayed.pruned.settled();
              await expectSameIndex(replayed, want, queries);

              // Persisted before exit (a checkpoint's merge, written), restored whole.
              expect((await live.pruned.persistBeforeExit(60_000)).outcome).toMatch(/persisted|current/);
              const restored = new ExhaustiveIndex({ ...OPTS, segments: newStore(home) });
              await restored.replaceAll([...survivors.values()]);
              expect(restored.pruned.startedFrom).toMatchObject({ from: 'segment', reindexed: 0 });
              await expectSameIndex(restored, want, queries);
            } finally {
              for (const s of stores.splice(0)) await s.close();
            }
          },
        ),
        // Each run builds four indexes and writes segment files: fewer runs than the in-memory properties.
        { numRuns: 60, timeout: PROPERTY_RUN_HANG_GUARD_MS },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});
