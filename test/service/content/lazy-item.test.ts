import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContentService } from '../../../service/content/content-service';
import { FileContentStore } from '../../../service/content/file-store/file-content-store';
import type { Item } from '../../../service/content/item';
import { itemFingerprint } from '../../../service/content/item-fingerprint';
import {
  PARSES_KEPT,
  PLAIN_IS_BODY,
  lazyItem,
  listingFields,
  packItem,
  sameRecord,
  unwrapItem,
  wasParsed,
} from '../../../service/content/lazy-item';
import { keepPlainText, plainText, plainTextOf } from '../../../service/content/plain-text';
import { silentLogger } from '../../../service/lib/logger';
import { ManualClock } from '../../helpers/manual-clock';

const plainItem = (id: string, extra: Partial<Item> = {}): Item => ({
  id,
  type: 'article',
  title: `Title of ${id}`,
  body: `Some **bold** words about ${id}, and [a link](https://example.com/${id}).`,
  summary: 'A summary',
  tags: ['One', 'two'],
  url: `/posts/${id}`,
  date: '2024-03-01',
  created_at: '2024-03-02T10:00:00.000Z',
  updated_at: '2024-03-03T10:00:00.000Z',
  ...extra,
});

/** Reads a field of `PARSES_KEPT` other packed items, so every parse kept before is dropped. */
const parseOthers = () => {
  for (let k = 0; k < PARSES_KEPT; k++) void packItem(plainItem(`other-${k}`)).title;
};

describe('packed items', () => {
  it('behave as the plain item: JSON, spread, keys, equality, `in`, plain text, fingerprint', () => {
    const plain = plainItem('a');
    keepPlainText(plain, plainText(plain.body));
    const packed = packItem(plainItem('a'));
    expect(JSON.stringify(packed)).toBe(JSON.stringify(plain));
    expect({ ...packed }).toEqual({ ...plain });
    expect(Object.keys(packed)).toEqual(Object.keys(plain));
    expect(Object.entries(packed)).toEqual(Object.entries(plain));
    expect(packed).toEqual(plain);
    expect('summary' in packed).toBe(true);
    expect('vector' in packed).toBe(false);
    expect(plainTextOf(packed)).toBe(plainTextOf(plain));
    expect(itemFingerprint(packed)).toBe(itemFingerprint(plain));
    // Packing a packed item gives it back.
    expect(packItem(packed)).toBe(packed);
  });

  it('keep a plain text that is the body, or one not computed yet, as the record does', () => {
    const same = plainItem('same', { body: 'plain words only' });
    keepPlainText(same, same.body);
    expect(plainTextOf(packItem(same))).toBe('plain words only');
    // Not kept on the plain item: computed at first use and kept in the packed item's state.
    const absent = packItem(plainItem('absent'));
    const text = plainTextOf(absent);
    expect(text).toBe(plainText(plainItem('absent').body));
    parseOthers();
    expect(wasParsed(absent)).toBe(false);
    expect(plainTextOf(absent, { keep: false })).toBe(text);
  });

  it('read their id, type, fingerprint and listing keys without a parse', () => {
    parseOthers();
    const packed = packItem(plainItem('b', { tags: [] }));
    expect(wasParsed(packed)).toBe(false);
    expect([packed.id, packed.type, packed.date, packed.created_at, packed.updated_at, packed.tags]).toEqual([
      'b',
      'article',
      '2024-03-01',
      '2024-03-02T10:00:00.000Z',
      '2024-03-03T10:00:00.000Z',
      [],
    ]);
    expect(listingFields(packed)).toEqual({
      date: '2024-03-01',
      created_at: '2024-03-02T10:00:00.000Z',
      updated_at: '2024-03-03T10:00:00.000Z',
      tags: [],
    });
    itemFingerprint(packed);
    expect(wasParsed(packed)).toBe(false);
    expect(packed.title).toBe('Title of b');
    expect(wasParsed(packed)).toBe(true);
  });

  it('answer that they hold no vector without a parse (a catalogue entry from its bytes), and give one they hold', () => {
    parseOthers();
    const plain = packItem(plainItem('v0'));
    const withVector = packItem(plainItem('v1', { vector: [0.5, -1] }));
    expect(plain.vector).toBeUndefined();
    expect(wasParsed(plain)).toBe(false);
    expect(withVector.vector).toEqual([0.5, -1]);
    // A catalogue entry: its record's bytes in a file, read for the key once.
    const records = [
      plainItem('c0'),
      plainItem('c1', { vector: [1, 2] }),
      plainItem('c2', { body: 'says "vector": 1' }),
    ];
    const file = Buffer.from(records.map((r) => JSON.stringify(r)).join('\n'));
    let at = 0;
    const entries = records.map((r) => {
      const end = at + Buffer.byteLength(JSON.stringify(r));
      const item = lazyItem(r.id, r.type, itemFingerprint(r), file, at, end, PLAIN_IS_BODY, 0);
      at = end + 1;
      return item;
    });
    expect(entries.map((e) => e.vector)).toEqual([undefined, [1, 2], undefined]);
    expect(entries.map((e) => wasParsed(e))).toEqual([false, true, false]);
  });

  it('keep their parse only among the most recent ones (PARSES_KEPT), and read the same after', () => {
    const first = packItem(plainItem('first'));
    expect(first.body).toContain('first');
    expect(wasParsed(first)).toBe(true);
    parseOthers();
    expect(wasParsed(first)).toBe(false);
    expect(first).toEqual(unwrapItem(first));
    expect(first.summary).toBe('A summary');
  });

  it('refuse changes with a clear error (a parse that is dropped would lose them)', () => {
    const packed = packItem(plainItem('c')) as { -readonly [K in keyof Item]: Item[K] };
    const refused = /item "c" is packed .* cannot be changed/;
    expect(() => {
      packed.title = 'new';
    }).toThrow(refused);
    expect(() => {
      delete packed.summary;
    }).toThrow(refused);
    expect(() => Object.defineProperty(packed, 'body', { value: 'x' })).toThrow(refused);
    expect(() => Object.freeze(packed)).toThrow(refused);
    expect(packed.title).toBe('Title of c');
  });

  it('are the same record only with the same bytes: fingerprint, record and own plain text', () => {
    const a = packItem(plainItem('a'));
    expect(sameRecord(a, a)).toBe(true);
    expect(sameRecord(a, packItem(plainItem('a')))).toBe(true);
    expect(sameRecord(a, packItem(unwrapItem(a)))).toBe(true);
    // The fingerprint's blind spot (same id, updated_at and field lengths): the bytes differ.
    const body = plainItem('a').body;
    const twin = packItem(plainItem('a', { body: body.replace('bold', 'BOLD') }));
    expect(itemFingerprint(twin)).toBe(itemFingerprint(a));
    expect(sameRecord(a, twin)).toBe(false);
    expect(sameRecord(a, packItem(plainItem('a', { updated_at: '2024-03-04T10:00:00.000Z' })))).toBe(false);
    expect(sameRecord(a, packItem(plainItem('b')))).toBe(false);
    // Its plain text kept otherwise (one of its own against none computed yet), or the item not packed.
    const own = plainItem('a');
    keepPlainText(own, 'Some other plain text');
    expect(sameRecord(a, packItem(own))).toBe(false);
    expect(sameRecord(packItem(own), packItem(unwrapItem(packItem(own))))).toBe(true);
    const computed = plainItem('a');
    keepPlainText(computed, plainText(computed.body));
    expect(sameRecord(a, packItem(computed))).toBe(false);
    expect(sameRecord(a, plainItem('a'))).toBe(false);
    expect(sameRecord(plainItem('a'), a)).toBe(false);
  });

  it('unwrap to a plain copy of their own', () => {
    const packed = packItem(plainItem('d'));
    const copy = unwrapItem(packed) as { -readonly [K in keyof Item]: Item[K] };
    expect(wasParsed(copy)).toBeUndefined();
    expect(unwrapItem(packed)).not.toBe(copy);
    copy.title = 'changed';
    expect(packed.title).toBe('Title of d');
    expect(plainTextOf(copy)).toBe(plainTextOf(packed));
  });
});

describe('the content service holds items packed', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'packed-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const started = async () => {
    const store = new FileContentStore({ dir, logger: silentLogger() });
    const content = new ContentService(store, new ManualClock(), silentLogger());
    const seen: Item[] = [];
    content.onChange(async (c) => {
      seen.push(...(c.all ?? c.upserted));
    });
    await content.start();
    return { store, content, seen };
  };

  it('as written, loaded after a restart (with and without the catalogue), and as told to its listeners', async () => {
    const a = await started();
    const inputs = ['e', 'f', 'g'].map((id) => {
      const { title, body, summary, tags, url, date, type } = plainItem(id);
      return { id, type, title, body, summary, tags, url, date };
    });
    const written = await a.content.ingest(inputs);
    expect(written.map((i) => wasParsed(i) !== undefined)).toEqual([true, true, true]);
    expect(a.seen.map((i) => wasParsed(i) !== undefined)).toEqual([true, true, true]);
    expect(written.map((i) => a.content.get(i.id))).toEqual(written);
    const expected = written.map((i) => ({ ...unwrapItem(i), plain: plainTextOf(i) }));
    await a.store.close();
    // The first restart parses the log (a catalogue is written after it); the second starts from the catalogue.
    for (let restart = 0; restart < 2; restart++) {
      const b = await started();
      const held = ['e', 'f', 'g'].map((id) => b.content.get(id)!);
      expect(held.map((i) => wasParsed(i) !== undefined)).toEqual([true, true, true]);
      expect(held.map((i) => ({ ...unwrapItem(i), plain: plainTextOf(i) }))).toEqual(expected);
      expect(b.seen.map((i) => i.id).sort()).toEqual(['e', 'f', 'g']);
      await b.store.catalogueWritten();
      await b.store.close();
    }
  });
});
