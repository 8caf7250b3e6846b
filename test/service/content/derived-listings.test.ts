import { FileContentStore } from '../../../service/content/file-store/file-content-store';
import { ContentService } from '../../../service/content/content-service';
import type { ItemInput } from '../../../service/content/item';
import { silentLogger } from '../../../service/lib/logger';
import { ManualClock } from '../../helpers/manual-clock';
import { withTempDir } from '../../helpers/file-content-store';

/**
 * Issue 40: a listing filtered or sorted otherwise than newest first is made once per version of
 * the listing it starts from, and every write (create, replace, delete) is seen by the next read.
 */
const input = (id: string, day: string, extra: Partial<ItemInput> = {}): ItemInput & { id: string } => ({
  id,
  type: 'article',
  title: `Title ${id}`,
  body: `Body of ${id}`,
  tags: ['common'],
  date: day,
  ...extra,
});

describe('ContentService.list with another sort or a filter (issue 40)', () => {
  it('answers the same array while nothing is written, and follows every write', async () => {
    await withTempDir('derived-listings-', async (dir) => {
      const store = new FileContentStore({ dir, logger: silentLogger() });
      const content = new ContentService(store, new ManualClock(), silentLogger());
      await content.start();
      try {
        await content.ingest([
          input('a', '2020-01-03'),
          input('b', '2020-01-01', { tags: ['common', 'x'] }),
          input('c', '2021-05-01'),
          input('p', '2020-01-02', { type: 'project' }),
        ]);
        const ids = (opts: Parameters<ContentService['list']>[1]) => {
          const page = content.list('article', opts);
          return { total: page.total, ids: page.items.map((i) => i.id) };
        };
        const asc = { limit: 10, offset: 0, sort: 'date:asc' as const };
        const in2020 = { limit: 10, offset: 0, filter: { date_from: '2020-01-01', date_to: '2020-12-31' } };
        const tagged = { limit: 10, offset: 0, tag: 'COMMON', sort: 'date:asc' as const };
        expect(ids(asc)).toEqual({ total: 3, ids: ['b', 'a', 'c'] });
        expect(ids(in2020)).toEqual({ total: 2, ids: ['a', 'b'] });
        expect(ids(tagged)).toEqual({ total: 3, ids: ['b', 'a', 'c'] });
        // Asked again with nothing written: the same answers (from the kept listings).
        expect(ids({ ...asc, offset: 1, limit: 1 })).toEqual({ total: 3, ids: ['a'] });
        expect(ids(in2020)).toEqual({ total: 2, ids: ['a', 'b'] });
        // A new item, a replaced one (moved in time) and a deleted one: every listing follows.
        await content.write({ items: [input('d', '2019-06-01'), input('c', '2020-06-01')], delete: ['b'] });
        expect(ids(asc)).toEqual({ total: 3, ids: ['d', 'a', 'c'] });
        expect(ids(in2020)).toEqual({ total: 2, ids: ['c', 'a'] });
        expect(ids(tagged)).toEqual({ total: 3, ids: ['d', 'a', 'c'] });
        expect(ids({ limit: 10, offset: 0, tag: 'x', sort: 'date:asc' })).toEqual({ total: 0, ids: [] });
      } finally {
        await store.close();
      }
    });
  });
});
