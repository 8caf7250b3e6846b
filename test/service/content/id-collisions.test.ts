import { ContentService } from '../../../service/content/content-service';
import { describeItems, idCollisions } from '../../../service/content/id-collisions';
import { silentLogger } from '../../../service/lib/logger';
import { withFileStore } from '../../helpers/file-content-store';

describe('idCollisions', () => {
  it('groups every item that shares an id, in the order sent, and nothing else', () => {
    const items = [
      { index: 0, title: 'C++ tips', id: 'c-tips' },
      { index: 1, title: 'Go tips', id: 'go-tips' },
      { index: 2, title: 'C# tips', id: 'c-tips' },
      { index: 3, title: 'C tips', id: 'c-tips', file: 'c.md' },
    ];
    expect(idCollisions(items)).toEqual([
      {
        id: 'c-tips',
        items: [
          { index: 0, title: 'C++ tips' },
          { index: 2, title: 'C# tips' },
          { index: 3, title: 'C tips', file: 'c.md' },
        ],
      },
    ]);
    expect(idCollisions(items.slice(0, 2))).toEqual([]);
  });

  it('names the items by index and title', () => {
    expect(
      describeItems([
        { index: 0, title: 'C++ tips' },
        { index: 1, title: 'C# "sharp" tips', file: 'a.json' },
      ]),
    ).toBe('item 0 ("C++ tips") and a.json item 1 ("C# \\"sharp\\" tips")');
  });
});

describe('ContentService.ingestWithChanges', () => {
  it('refuses two inputs with one id before writing anything (a caller that forgot to check)', async () => {
    await withFileStore(async (store) => {
      const content = new ContentService(store, { now: () => 0 }, silentLogger());
      await content.start();
      const item = { id: 'c-tips', type: 'article' as const, title: 'C tips', body: '', tags: [] };
      await expect(content.ingestWithChanges([item, { ...item, title: 'C++ tips' }])).rejects.toThrow(
        /"c-tips" appears more than once/,
      );
      expect(await store.getMany(['c-tips'])).toEqual([]);
      expect(content.size).toBe(0);
    });
  });
});

describe('describeItems, bounded', () => {
  it('names the first ten items of a large group and counts the rest', () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ index: i, title: 'Same' }));
    const text = describeItems(many);
    expect(text).toContain('item 9 ("Same") and 990 more');
    expect(text).not.toContain('item 10 ');
    expect(text.length).toBeLessThan(300);
  });
});
