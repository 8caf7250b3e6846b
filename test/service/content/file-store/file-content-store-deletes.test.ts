import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { FileContentStore } from '../../../../service/content/file-store/file-content-store';
import { decodeRecords, encodeRecord } from '../../../../service/content/file-store/record-log';
import type { Item } from '../../../../service/content/item';
import { testItem } from '../../../helpers/file-content-store';

/**
 * Issue 39: the file store deletes. A delete is a record of the log (with the puts of the same
 * write, one record), fdatasynced before it resolves; replay applies it, compaction drops the
 * deleted items and their text, the catalogue no longer lists them, and a whole snapshot replaces
 * older generations so none brings a deleted item back.
 */
const item = (id: string, body = `body of ${id}`): Item => testItem(id, body);

function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) },
  );
  return { logger, lines };
}

describe('FileContentStore deletes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'file-store-del-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const open = async (opts: { compactAfterBytes?: number; catalogueTailBytes?: number } = {}) => {
    const { logger, lines } = recordingLogger();
    const store = new FileContentStore({ dir, logger, ...opts });
    const items = await store.load();
    await store.catalogueWritten();
    const fromCatalogue = lines.some((l) => l.msg === 'content store loaded' && l.catalogue === true);
    return { store, items, lines, fromCatalogue };
  };
  const ids = (items: readonly Item[]) => items.map((i) => i.id).sort();
  const contentBytes = () =>
    readdirSync(dir)
      .filter((f) => /^content-\d+\.(log|snapshot)$/.test(f))
      .map((f) => readFileSync(join(dir, f)).toString('utf8'))
      .join('');

  it('writes the puts and deletes of one write as one record, and a reopen applies it', async () => {
    const s = await open();
    await s.store.write([item('a'), item('b'), item('c')]);
    await s.store.write([item('d')], ['a', 'never-held']);
    expect(await s.store.getMany(['a', 'b', 'd'])).toEqual([item('b'), item('d')]);
    await s.store.close();
    const records = decodeRecords(readFileSync(join(dir, 'content-0.log'))).records as Array<Record<string, unknown>>;
    expect(records).toHaveLength(2);
    expect(records[1]).toMatchObject({ op: 'put', removed: ['a', 'never-held'] });
    const re = await open({ catalogueTailBytes: Infinity });
    expect(ids(re.items)).toEqual(['b', 'c', 'd']);
    // Deleted, then written again: it is back, with its new content.
    await re.store.write([item('a', 'again')]);
    await re.store.write([], ['c']);
    await re.store.close();
    const last = await open();
    expect(ids(last.items)).toEqual(['a', 'b', 'd']);
    expect(last.items.find((i) => i.id === 'a')?.body).toBe('again');
    await last.store.close();
  });

  it('compaction drops deleted items and their text from the files', async () => {
    const s = await open({ compactAfterBytes: 2048 });
    await s.store.write([item('secret', 'erase-me-please'), item('kept', 'keep this')]);
    await s.store.write([], ['secret']);
    expect(contentBytes()).toContain('erase-me-please');
    // Enough writes for a compaction (the log outgrows 2 KB and its snapshot).
    for (let i = 0; i < 20; i++) await s.store.write([item(`f-${i}`, 'x'.repeat(200))]);
    await s.store.close();
    expect(readdirSync(dir).some((f) => /^content-[1-9]\d*\.snapshot$/.test(f))).toBe(true);
    expect(contentBytes()).not.toContain('erase-me-please');
    const re = await open();
    expect(ids(re.items)).not.toContain('secret');
    expect(ids(re.items)).toContain('kept');
    await re.store.close();
  });

  it('a start from the catalogue applies the deletes of the log after it, and the next catalogue leaves them out', async () => {
    const w = await open({ catalogueTailBytes: 0 });
    await w.store.write(Array.from({ length: 30 }, (_, k) => item(`i-${k}`)));
    await w.store.close();
    // Deletes after the catalogue (replayed from the log at the start), of catalogued items.
    const d = await open({ catalogueTailBytes: Infinity });
    expect(d.fromCatalogue).toBe(true);
    await d.store.write([item('new')], ['i-3', 'i-7']);
    expect(await d.store.getMany(['i-3', 'i-4'])).toEqual([item('i-4')]);
    await d.store.close();
    const tail = await open({ catalogueTailBytes: Infinity });
    expect(tail.fromCatalogue).toBe(true);
    expect(ids(tail.items)).toEqual(
      ids([...Array.from({ length: 30 }, (_, k) => item(`i-${k}`)), item('new')]).filter(
        (i) => i !== 'i-3' && i !== 'i-7',
      ),
    );
    expect(await tail.store.getMany(['i-3', 'i-7', 'new'])).toEqual([item('new')]);
    // A delete while the catalogue's items are still apart (no look-up by id yet).
    await tail.store.write([], ['i-0']);
    await tail.store.close();
    // A new catalogue (written after this start) from the files, without the deleted ids.
    const fresh = await open({ catalogueTailBytes: 0 });
    expect(fresh.fromCatalogue).toBe(true);
    await fresh.store.close();
    const fromNew = await open({ catalogueTailBytes: Infinity });
    expect(fromNew.fromCatalogue).toBe(true);
    expect(fromNew.lines.some((l) => /not used/.test(String(l.msg)))).toBe(false);
    const left = ids(fromNew.items);
    expect(left).toHaveLength(28);
    for (const gone of ['i-0', 'i-3', 'i-7']) expect(left).not.toContain(gone);
    await fromNew.store.close();
  });

  it('an older generation beside a whole snapshot brings no deleted item back (a crash mid-clean-up, a restored backup)', async () => {
    const s = await open({ compactAfterBytes: 2048 });
    for (let i = 0; i < 20; i++) await s.store.write([item(`i-${i}`, 'x'.repeat(200))]);
    await s.store.write([], ['i-5']);
    // Writes until a compaction took the delete in: it is the snapshot's absence, no log holds it.
    for (let k = 0; k < 200 && contentBytes().includes('"removed"'); k++)
      await s.store.write([item(`f-${k}`, 'y'.repeat(200))]);
    expect(contentBytes()).not.toContain('"removed"');
    await s.store.close();
    const snap = readdirSync(dir).find((f) => f.endsWith('.snapshot'))!;
    const gen = Number(/\d+/.exec(snap)![0]);
    // What a compaction's clean-up cut short by a kill leaves (the older log deleted, its snapshot
    // not yet), or an operator's old backup: an older snapshot that still holds the deleted item.
    writeFileSync(
      join(dir, `content-${gen - 1}.snapshot`),
      Buffer.concat([
        encodeRecord({ op: 'snapshot', items: [item('i-5', 'deleted since'), item('i-0', 'old')] }),
        encodeRecord({ op: 'end', count: 2 }),
      ]),
    );
    const re = await open();
    expect(ids(re.items)).not.toContain('i-5');
    expect(re.items.find((i) => i.id === 'i-0')?.body).toBe('x'.repeat(200));
    expect(re.lines.some((l) => l.notInSnapshot === 1)).toBe(true);
    await re.store.close();
    const last = await open();
    expect(ids(last.items)).not.toContain('i-5');
    await last.store.close();
  });

  it('a damaged current snapshot is merged with the older generation, whose log deletes apply', async () => {
    writeFileSync(
      join(dir, 'content-1.snapshot'),
      Buffer.concat([
        encodeRecord({ op: 'snapshot', items: [item('a'), item('b')] }),
        encodeRecord({ op: 'end', count: 2 }),
      ]),
    );
    writeFileSync(
      join(dir, 'content-1.log'),
      Buffer.concat([
        encodeRecord({ op: 'put', items: [], removed: ['a'] }),
        encodeRecord({ op: 'put', items: [item('c')] }),
      ]),
    );
    writeFileSync(join(dir, 'content-2.snapshot'), 'damaged');
    const s = await open();
    expect(ids(s.items)).toEqual(['b', 'c']);
    await s.store.close();
  });
});
