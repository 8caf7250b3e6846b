import { FileContentStore } from '../../../service/content/file-store/file-content-store';
import { ContentService, type ContentChange } from '../../../service/content/content-service';
import type { ItemInput } from '../../../service/content/item';
import { OperationRefused } from '../../../service/content/operations';
import { silentLogger } from '../../../service/lib/logger';
import { ManualClock } from '../../helpers/manual-clock';
import { withTempDir } from '../../helpers/file-content-store';

/**
 * Issue 39: ContentService.write applies delete, delete_where and patch with items as one store
 * write, and the in-memory copy, listings, tag indexes and listeners follow; refusals apply
 * nothing. On the real file store, reopened to check what is durable.
 */
const input = (id: string, extra: Partial<ItemInput> = {}): ItemInput & { id: string } => ({
  id,
  type: 'article',
  title: `Title ${id}`,
  body: `Body of ${id}`,
  tags: ['common'],
  ...extra,
});

async function withContent(
  fn: (c: {
    content: ContentService;
    store: FileContentStore;
    clock: ManualClock;
    changes: ContentChange[];
    reopen: () => Promise<string[]>;
  }) => Promise<void>,
): Promise<void> {
  await withTempDir('content-ops-', async (dir) => {
    const store = new FileContentStore({ dir, logger: silentLogger() });
    const clock = new ManualClock();
    const content = new ContentService(store, clock, silentLogger());
    const changes: ContentChange[] = [];
    content.onChange(async (c) => void changes.push(c));
    await content.start();
    const reopen = async () => {
      await store.close();
      const again = new FileContentStore({ dir, logger: silentLogger() });
      const ids = (await again.load()).map((i) => i.id).sort();
      await again.close();
      return ids;
    };
    try {
      await fn({ content, store, clock, changes, reopen });
    } finally {
      await store.close().catch(() => undefined);
    }
  });
}

describe('ContentService.write (issue 39)', () => {
  it('deletes by id in one store write with the items; unknown ids are reported, not refused', async () => {
    await withContent(async ({ content, store, changes, reopen }) => {
      await content.ingest([input('a'), input('b', { tags: ['x'] }), input('c', { type: 'project' })]);
      // Listings and tag pages built before the delete, so they must follow it.
      expect(content.list('article', { limit: 10, offset: 0 }).total).toBe(2);
      expect(content.list('article', { limit: 10, offset: 0, tag: 'x' }).total).toBe(1);
      const writes: Array<[string[], string[]]> = [];
      const write = store.write.bind(store);
      store.write = (items, removed = []) => {
        writes.push([items.map((i) => i.id), [...removed]]);
        return write(items, removed);
      };
      changes.length = 0;
      const out = await content.write({ delete: ['b', 'nope', 'b'], items: [input('d')] });
      expect(out).toMatchObject({ deleted: ['b'], notFound: ['nope'], deletedWhere: [] });
      expect(out.items.map((i) => [i.item.id, i.change])).toEqual([['d', 'created']]);
      expect(writes).toEqual([[['d'], ['b']]]);
      expect(changes).toEqual([
        expect.objectContaining({ upserted: [expect.objectContaining({ id: 'd' })], removed: ['b'] }),
      ]);
      expect(content.get('b')).toBeUndefined();
      expect(content.size).toBe(3);
      expect(
        content
          .list('article', { limit: 10, offset: 0 })
          .items.map((i) => i.id)
          .sort(),
      ).toEqual(['a', 'd']);
      expect(content.list('article', { limit: 10, offset: 0, tag: 'x' }).total).toBe(0);
      expect(content.all().map((i) => i.id)).not.toContain('b');
      // A delete of nothing held writes nothing.
      writes.length = 0;
      expect(await content.write({ delete: ['nope'] })).toMatchObject({ deleted: [], notFound: ['nope'] });
      expect(writes).toEqual([]);
      expect(await reopen()).toEqual(['a', 'c', 'd']);
    });
  });

  it('delete_where deletes every match (type, tag case-insensitive, date_before on date else created_at)', async () => {
    await withContent(async ({ content, clock, reopen }) => {
      clock.set(Date.parse('2026-03-01T00:00:00Z'));
      await content.ingest([
        input('old', { date: '2025-12-31' }),
        input('new', { date: '2026-01-01' }),
        input('undated'),
        input('proj', { type: 'project', tags: ['Retired'] }),
        input('art', { tags: ['retired'] }),
      ]);
      expect((await content.write({ deleteWhere: { tag: ['RETIRED'], type: ['project'] } })).deletedWhere).toEqual([
        'proj',
      ]);
      expect((await content.write({ deleteWhere: { date_before: '2026-01-01' } })).deletedWhere).toEqual(['old']);
      // `undated` was created on 2026-03-01 (its created_at is the day compared).
      expect([...(await content.write({ deleteWhere: { date_before: '2026-03-02' } })).deletedWhere].sort()).toEqual([
        'art',
        'new',
        'undated',
      ]);
      expect(content.size).toBe(0);
      expect(await reopen()).toEqual([]);
    });
  });

  it('patch replaces the fields given, keeps the others, moves updated_at and keeps created_at', async () => {
    await withContent(async ({ content, clock, reopen }) => {
      const [before] = await content.ingest([input('a', { summary: 'sum', url: '/a', tags: ['one'] })]);
      clock.advance(60_000);
      const out = await content.write({ patch: [{ id: 'a', fields: { tags: ['two'], summary: '' } }] });
      const after = content.get('a')!;
      expect(out.patched).toEqual([{ item: after, change: 'updated' }]);
      expect(after).toMatchObject({ title: 'Title a', body: 'Body of a', url: '/a', tags: ['two'] });
      expect(after.summary).toBeUndefined();
      expect(after.created_at).toBe(before.created_at);
      expect(after.updated_at > before.updated_at).toBe(true);
      expect(content.list('article', { limit: 10, offset: 0, tag: 'two' }).total).toBe(1);
      // The same fields again: unchanged, not written, updated_at stays.
      clock.advance(60_000);
      const again = await content.write({ patch: [{ id: 'a', fields: { tags: ['two'] } }] });
      expect(again.patched[0]).toMatchObject({ change: 'unchanged' });
      expect(content.get('a')!.updated_at).toBe(after.updated_at);
      expect(await reopen()).toEqual(['a']);
    });
  });

  it('refuses, applying nothing: a patch that breaks a field rule, an unknown patch id or field, an id in two operations', async () => {
    await withContent(async ({ content, changes }) => {
      await content.ingest([input('a', { tags: ['t'] }), input('b')]);
      changes.length = 0;
      const refused = async (p: Promise<unknown>) => {
        const e = await p.catch((err: unknown) => err);
        expect(e).toBeInstanceOf(OperationRefused);
        return e as OperationRefused;
      };
      const bad = await refused(content.write({ delete: ['b'], patch: [{ id: 'a', fields: { title: '   ' } }] }));
      expect(bad).toMatchObject({ code: 'invalid_item', field: 'patch.0.title' });
      expect(bad.issues?.[0]).toEqual({ field: 'patch.0.title', message: 'title must not be empty' });
      expect(await refused(content.write({ patch: [{ id: 'zz', fields: { title: 'x' } }] }))).toMatchObject({
        code: 'unknown_id',
        field: 'patch.0.id',
      });
      expect(await refused(content.write({ patch: [{ id: 'a', fields: { created_at: 'x' } }] }))).toMatchObject({
        code: 'unknown_field',
        field: 'patch.0.created_at',
      });
      expect(await refused(content.write({ delete: ['a'], patch: [{ id: 'a', fields: {} }] }))).toMatchObject({
        code: 'id_in_two_operations',
        field: 'patch.0.id',
      });
      expect(await refused(content.write({ deleteWhere: { tag: ['t'] }, items: [input('a')] }))).toMatchObject({
        code: 'id_in_two_operations',
        field: 'items.0.id',
      });
      expect(changes).toEqual([]);
      expect(content.size).toBe(2);
      expect(content.get('b')).toBeDefined();
      // delete_where and delete may name one id: deleted, reported by both.
      expect(await content.write({ deleteWhere: { tag: ['t'] }, delete: ['a'] })).toMatchObject({
        deletedWhere: ['a'],
        deleted: ['a'],
        notFound: [],
      });
    });
  });

  it('a write applied while delete_where scans in steps is planned against: a match it changed is not deleted, a patch is merged into it', async () => {
    await withContent(async ({ content, reopen }) => {
      // Enough items for the scan to take several steps of the event loop.
      const many = Array.from({ length: 20_000 }, (_, k) => input(`old-${k}`, { tags: ['old'], body: 'b' }));
      await content.ingest([...many, input('p', { body: 'first body' })]);
      const big = content.write({ deleteWhere: { tag: ['old'] }, patch: [{ id: 'p', fields: { title: 'Patched' } }] });
      // Another write lands between two steps of the scan: old-0 no longer matches, p's body changes.
      await new Promise((r) => setImmediate(r));
      const other = content.ingest([
        input('old-0', { tags: ['keep'], body: 'b' }),
        input('p', { title: 'Title p', body: 'second body' }),
      ]);
      const [out] = await Promise.all([big, other]);
      expect(out.deletedWhere).toHaveLength(19_999);
      expect(content.get('old-0')?.tags).toEqual(['keep']);
      expect(content.get('p')?.body).toBe('second body');
      expect(content.size).toBe(2);
      expect(await reopen()).toEqual(['old-0', 'p']);
    });
  }, 120_000);

  it('a remote change deletes the ids it says were deleted and keeps ids the store lost', async () => {
    await withContent(async ({ content, store }) => {
      await content.ingest([input('a'), input('b')]);
      const handlers: { change?: (c: { ids: string[]; deleted?: Record<string, number> }) => Promise<void> } = {};
      // The file store has no other writers: its handlers are taken as a shared store would use them.
      (store as unknown as { onRemoteChange: (h: typeof handlers) => void }).onRemoteChange = (h) =>
        Object.assign(handlers, h);
      const remote = new ContentService(store, new ManualClock(), silentLogger());
      await remote.start();
      // `a` was deleted by another replica; `b` reads absent without a delete (a store that lost it).
      store.getMany = async () => [];
      await handlers.change!({ ids: ['a', 'b'], deleted: { a: Date.parse('2026-01-02T00:00:00.000Z') } });
      expect(remote.get('a')).toBeUndefined();
      expect(remote.get('b')).toBeDefined();
    });
  });
});
