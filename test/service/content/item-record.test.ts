import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContentService } from '../../../service/content/content-service';
import { FileContentStore } from '../../../service/content/file-store/file-content-store';
import { fromRecord, toRecord } from '../../../service/content/item-record';
import { PLAIN_TEXT_VERSION, plainTextOf } from '../../../service/content/plain-text';
import { encodeRecord } from '../../../service/content/file-store/record-log';
import { silentLogger } from '../../../service/lib/logger';
import { testItem, withFileStore, withTempDir } from '../../helpers/file-content-store';

const item = testItem;

describe('the plain text kept with an item', () => {
  it('is in the store record, never in the item’s JSON, and not carried by a spread copy', () => {
    const i = item('a', '# Title\n\nSome **bold** [link](http://x).');
    expect(plainTextOf(i)).toBe('Title\nSome bold link.');
    expect(JSON.parse(JSON.stringify(i))).toEqual(item('a', i.body));
    expect(toRecord(i)).toEqual({
      ...item('a', i.body),
      plain_text: 'Title\nSome bold link.',
      plain_text_version: PLAIN_TEXT_VERSION,
    });
    const changed = { ...i, body: 'other words' };
    expect(plainTextOf(changed)).toBe('other words');
  });

  it('is read from the record when the record is of this version, and computed otherwise', () => {
    const stored = fromRecord({
      ...item('a', 'body words'),
      plain_text: 'stored words',
      plain_text_version: PLAIN_TEXT_VERSION,
    });
    expect(stored).toEqual(item('a', 'body words'));
    expect(plainTextOf(stored)).toBe('stored words');
    expect(
      plainTextOf(
        fromRecord({ ...item('b', 'body words'), plain_text: 'stale', plain_text_version: PLAIN_TEXT_VERSION - 1 }),
      ),
    ).toBe('body words');
    expect(plainTextOf(fromRecord(item('c', '*old* record')))).toBe('old record');
  });

  it('is computed at ingest, written with the item by the file store, and read back at load', async () => {
    await withTempDir('item-record-', async (dir) => {
      const store = new FileContentStore({ dir, logger: silentLogger() });
      const content = new ContentService(store, { now: () => Date.parse('2026-01-01T00:00:00Z') }, silentLogger());
      await content.start();
      const [written] = await content.ingest([
        { id: 'md', type: 'article', title: 'Md', body: '## Heading\n\nA `code` line.', tags: [] },
      ]);
      await store.close();
      const log = readdirSync(dir).find((f) => f.endsWith('.log'))!;
      // The items' own fields, and their plain texts beside them (null: the body is plain text).
      expect(readFileSync(join(dir, log), 'utf8')).toContain(
        `"plain":["Heading\\nA code line."],"plain_text_version":${PLAIN_TEXT_VERSION}`,
      );
      expect(plainTextOf(written)).toBe('Heading\nA code line.');
      // Records whose stored plain text differs from its body's show the stored one is used, in
      // the older form (inside the item) and in this one; null stands for the body.
      const plain = { ...item('plain', 'just words'), updated_at: written.updated_at };
      writeFileSync(
        join(dir, log),
        Buffer.concat([
          encodeRecord({
            op: 'put',
            items: [{ ...written, plain_text: 'as stored', plain_text_version: PLAIN_TEXT_VERSION }],
          }),
          encodeRecord({
            op: 'put',
            items: [{ ...written, id: 'md2' }, plain],
            plain: ['stored too', null],
            plain_text_version: PLAIN_TEXT_VERSION,
          }),
          encodeRecord({
            op: 'put',
            items: [{ ...written, id: 'md3' }],
            plain: ['of another version'],
            plain_text_version: PLAIN_TEXT_VERSION + 1,
          }),
        ]),
      );
      const again = new FileContentStore({ dir, logger: silentLogger() });
      const [loaded, md2, loadedPlain, md3] = await again.load();
      expect(loaded).toEqual(JSON.parse(JSON.stringify(written)));
      expect(plainTextOf(loaded)).toBe('as stored');
      expect(md2).toEqual({ ...JSON.parse(JSON.stringify(written)), id: 'md2' });
      expect(plainTextOf(md2)).toBe('stored too');
      expect(loadedPlain).toEqual(plain);
      expect(plainTextOf(loadedPlain)).toBe('just words');
      expect(plainTextOf(md3)).toBe('Heading\nA code line.');
      await again.close();
    });
  });

  it('loads records written before it existed', async () => {
    await withTempDir('item-record-', async (dir) => {
      writeFileSync(join(dir, 'content-0.log'), encodeRecord({ op: 'put', items: [item('old', '**Old** body')] }));
      const store = new FileContentStore({ dir, logger: silentLogger() });
      const [loaded] = await store.load();
      expect(loaded).toEqual(item('old', '**Old** body'));
      expect(plainTextOf(loaded)).toBe('Old body');
      await store.close();
    });
  });

  it('is kept by the in-memory copy (computed once at ingest)', async () => {
    await withFileStore(async (store) => {
      const content = new ContentService(store, { now: () => 0 }, silentLogger());
      await content.start();
      await content.ingest([{ id: 'm', type: 'article', title: 'M', body: '_memory_', tags: [] }]);
      expect(plainTextOf(content.get('m')!)).toBe('memory');
    });
  });
});
