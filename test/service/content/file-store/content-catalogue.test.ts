import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { ManualClock } from '../../../helpers/manual-clock';
import {
  OLD_CATALOGUE_KEY,
  buildCatalogue,
  catalogueParts,
  decodeCatalogue,
  encodeCatalogue,
} from '../../../../service/content/file-store/content-catalogue';
import { ContentService } from '../../../../service/content/content-service';
import { CATALOGUE_FILE, FileContentStore } from '../../../../service/content/file-store';
import { compareNewestFirst, ITEM_TYPES, type Item } from '../../../../service/content/item';
import { itemFingerprint } from '../../../../service/content/item-fingerprint';
import { listingFields, unwrapItem, wasParsed } from '../../../../service/content/lazy-item';
import { plainTextOf } from '../../../../service/content/plain-text';
import { encodeRecord } from '../../../../service/content/file-store/record-log';

const item = (id: string, n: number): Item => ({
  id,
  type: n % 3 === 0 ? 'project' : 'article',
  title: `Title "${id}" \\ ${n}`,
  // Markdown (a plain text of its own), plain text, and text with escapes and non-ASCII.
  body:
    n % 2 === 0
      ? `# Heading ${n}\n\nSome *emphasis* and a [link](https://x.example/${n}).`
      : `plain body ${n} naïve café \u2028 "quoted"`,
  ...(n % 4 === 0 ? { summary: `summary ${n}` } : {}),
  tags: n % 5 === 0 ? [] : [`Tag-${n % 7}`, 'Common'],
  ...(n % 6 === 0 ? { date: '2026-01-02', url: `/p/${n}` } : {}),
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: `2026-01-01T00:00:${String(n % 60).padStart(2, '0')}.000Z`,
});

function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) },
  );
  return { logger, lines };
}

/** What a caller can see of an item: its JSON, its plain text, its fingerprint. */
const seen = (items: readonly Item[]) => items.map((i) => [JSON.stringify(i), plainTextOf(i), itemFingerprint(i)]);

describe('FileContentStore content catalogue', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'catalogue-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const open = async (compactAfterBytes?: number) => {
    const { logger, lines } = recordingLogger();
    const store = new FileContentStore({
      dir,
      logger,
      catalogueTailBytes: 0,
      ...(compactAfterBytes ? { compactAfterBytes } : {}),
    });
    const items = await store.load();
    await store.catalogueWritten();
    return {
      store,
      items,
      lines,
      fromCatalogue: lines.some((l) => l.msg === 'content store loaded' && l.catalogue === true),
    };
  };

  /** Items as a full parse of the files gives them (no catalogue). */
  const parsedAll = async () => {
    const copy = mkdtempSync(join(tmpdir(), 'catalogue-copy-'));
    try {
      for (const f of readdirSync(dir))
        if (/^content-\d+\.(snapshot|log)$/.test(f)) writeFileSync(join(copy, f), readFileSync(join(dir, f)));
      const s = new FileContentStore({ dir: copy, logger: pino({ level: 'silent' }) });
      const items = await s.load();
      await s.close();
      return items;
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  };

  /** Writes enough to make the store compact into a new generation; returns the new snapshot's name. */
  const compactNow = async () => {
    const before = readdirSync(dir).find((f) => f.endsWith('.snapshot'));
    const c = await open(64);
    const batch = Array.from({ length: 60 }, (_, k) => item(`t-${k}`, k));
    await c.store.write(batch);
    await c.store.close();
    const after = readdirSync(dir).find((f) => f.endsWith('.snapshot'));
    expect(after).not.toBe(before);
    return batch.map((i) => i.id);
  };

  /** A snapshot and a log, both with items, an updated item and a catalogue of both. */
  const fill = async () => {
    const s = await open(4096);
    for (let i = 0; i < 40; i += 4) await s.store.write([0, 1, 2, 3].map((k) => item(`i-${i + k}`, i + k)));
    await s.store.write([item('i-3', 103), item('new', 7)]);
    await s.store.close();
    const again = await open(4096);
    await again.store.close();
    expect(readdirSync(dir).some((f) => f.endsWith('.snapshot'))).toBe(true);
    expect(readdirSync(dir)).toContain(CATALOGUE_FILE);
  };

  it('pauses between large records, not only every few hundred records (a log of batch-sized records is never one step)', async () => {
    const s = await open();
    const big = (k: number) => ({ ...item(`big-${k}`, 2 * k + 1), body: `plain ${'x'.repeat(100_000)} ${k}` });
    // Three put records of ~400 KB each: under the old rule (a pause every 256 records) none.
    for (let r = 0; r < 3; r++) await s.store.write([0, 1, 2, 3].map((k) => big(4 * r + k)));
    const items = await s.store.getMany(Array.from({ length: 12 }, (_, k) => `big-${k}`));
    await s.store.close();
    const log = readdirSync(dir).find((f) => f.endsWith('.log'))!;
    let pauses = 0;
    const cat = await buildCatalogue(
      items,
      [{ name: log, buf: readFileSync(join(dir, log)), snapshot: false }],
      async () => {
        pauses++;
      },
    );
    expect(cat?.ids).toEqual(items.map((i) => i.id));
    expect(pauses).toBeGreaterThanOrEqual(3);
  });

  it('encodes the ids and dates of more items than one step takes, a step at a time, as one piece would hold them', async () => {
    const s = await open();
    // More ids than catalogueParts joins in a step (4,096) and dates than listingKeys writes in one (8,192).
    await s.store.write(Array.from({ length: 9_000 }, (_, k) => item(`many-${k}`, k)));
    const items = await s.store.getMany(Array.from({ length: 9_000 }, (_, k) => `many-${k}`));
    await s.store.close();
    const log = readdirSync(dir).find((f) => f.endsWith('.log'))!;
    const cat = (await buildCatalogue(
      items,
      [{ name: log, buf: readFileSync(join(dir, log)), snapshot: false }],
      async () => undefined,
    ))!;
    const line = (i: Item) => {
      const f = listingFields(i);
      return `${f.date ?? ''}\n${f.created_at}\n${f.updated_at}`;
    };
    expect(cat.listing!.dates.toString('utf8')).toBe(items.map(line).join(''));
    const job = catalogueParts(cat);
    let steps = 0;
    let r = job.next();
    for (; !r.done; r = job.next()) steps++;
    expect(steps).toBeGreaterThanOrEqual(3);
    const back = decodeCatalogue(Buffer.concat(r.value));
    expect(back.ids).toEqual(items.map((i) => i.id));
    expect(Buffer.compare(back.listing!.dates, cat.listing!.dates)).toBe(0);
    expect(Array.from(back.fingerprint)).toEqual(items.map(itemFingerprint));
    // And a start from the catalogue the writer made of them loads what a full parse loads.
    const again = await open();
    await again.store.close();
    const fromIt = await open();
    expect(fromIt.fromCatalogue).toBe(true);
    expect(seen(fromIt.items)).toEqual(seen(await parsedAll()));
    await fromIt.store.close();
  });

  it('loads lazily what a full parse loads: order, JSON, plain text, fingerprint, spreads and keys', async () => {
    await fill();
    const expected = await parsedAll();
    const s = await open(4096);
    expect(s.fromCatalogue).toBe(true);
    expect(s.items.map((i) => i.id)).toEqual(expected.map((i) => i.id));
    expect(seen(s.items)).toEqual(seen(expected));
    expect(s.items).toEqual(expected);
    expect(s.items.map((i) => ({ ...i }))).toEqual(expected.map((i) => ({ ...i })));
    expect(s.items.map((i) => Object.entries(i))).toEqual(expected.map((i) => Object.entries(i)));
    expect(s.items.map(unwrapItem)).toEqual(expected);
    expect(s.items.find((i) => i.id === 'i-3')?.body).toBe(item('i-3', 103).body);
    await s.store.close();
  });

  it('writes after a start from the catalogue are replayed from the log at the next one, and compaction keeps everything', async () => {
    await fill();
    const s = await open(1 << 30);
    expect(s.fromCatalogue).toBe(true);
    await s.store.write([item('after', 1), item('i-0', 200)]);
    // Look-ups by id see the catalogue's items and the writes after it.
    expect(seen(await s.store.getMany(['after', 'i-0', 'i-5', 'nope']))).toEqual(
      seen([item('after', 1), item('i-0', 200), item('i-5', 5)]),
    );
    await s.store.close();
    // A torn append after the catalogue's part of the log is cut as before.
    appendFileSync(
      join(
        dir,
        readdirSync(dir).find((f) => f.endsWith('.log'))!,
      ),
      encodeRecord({ op: 'put', items: [item('torn', 1)] }).subarray(0, 20),
    );
    const expected = (await parsedAll()).filter((i) => i.id !== 'torn');
    const re = await open(1 << 30);
    expect(seen(re.items)).toEqual(seen(expected));
    expect(re.items.map((i) => i.id)).toContain('after');
    await re.store.close();
    // Compacting lazy items writes them whole.
    const added = await compactNow();
    const final = await open();
    expect(seen(final.items)).toEqual(seen(await parsedAll()));
    expect(final.items.map((i) => i.id)).toEqual([...expected.map((i) => i.id), ...added]);
    await final.store.close();
  });

  const damaged: Array<[string, (file: string) => void]> = [
    ['a flipped header byte', (f) => flip(f, 20)],
    ['a flipped body byte', (f) => flip(f, readFileSync(f).length - 40)],
    ['the last byte flipped', (f) => flip(f, readFileSync(f).length - 1)],
    ['truncation', (f) => writeFileSync(f, readFileSync(f).subarray(0, readFileSync(f).length - 3))],
    ['garbage', (f) => writeFileSync(f, 'not a catalogue')],
  ];
  function flip(file: string, at: number): void {
    const b = readFileSync(file);
    b[at] ^= 0x41;
    writeFileSync(file, b);
  }

  it.each(damaged)(
    'a catalogue with %s is not used: the files are parsed, it is logged and written anew',
    async (_what, damage) => {
      await fill();
      const expected = await parsedAll();
      damage(join(dir, CATALOGUE_FILE));
      const s = await open(4096);
      expect(s.fromCatalogue).toBe(false);
      expect(s.lines.some((l) => l.level === 40 && String(l.msg).startsWith('content catalogue not used'))).toBe(true);
      expect(seen(s.items)).toEqual(seen(expected));
      await s.store.close();
      const re = await open(4096);
      expect(re.fromCatalogue).toBe(true);
      expect(seen(re.items)).toEqual(seen(expected));
      await re.store.close();
    },
  );

  it('a catalogue of another generation or of content changed since is not used', async () => {
    await fill();
    const old = readFileSync(join(dir, CATALOGUE_FILE));
    await compactNow();
    writeFileSync(join(dir, CATALOGUE_FILE), old);
    const s = await open();
    expect(s.fromCatalogue).toBe(false);
    expect(seen(s.items)).toEqual(seen(await parsedAll()));
    await s.store.close();
    // A byte of the covered content changed (same length): the catalogue is refused, and the
    // store's own damage handling applies as before.
    const snapshot = join(
      dir,
      readdirSync(dir).find((f) => f.endsWith('.snapshot'))!,
    );
    const b = readFileSync(snapshot);
    const at = b.indexOf('plain body');
    b[at] = 'P'.charCodeAt(0);
    writeFileSync(snapshot, b);
    const d = await open();
    expect(d.fromCatalogue).toBe(false);
    expect(
      d.lines.some((l) => l.level === 40 && l.reason === `${snapshot.split('/').pop()} changed since it was made`),
    ).toBe(true);
    expect(d.lines.some((l) => l.level === 50 && String(l.msg).includes('is damaged'))).toBe(true);
    await d.store.close();
  });

  /** A content service started on the folder (the catalogue kept as it is), and its items parsed so far from it. */
  const service = async () => {
    const { logger, lines } = recordingLogger();
    const store = new FileContentStore({ dir, logger, catalogueTailBytes: 1 << 30 });
    const content = new ContentService(store, new ManualClock(), logger);
    await content.start();
    const parsed = () => content.all().filter((i) => wasParsed(i) === true).length;
    return { content, lines, parsed, close: () => store.catalogueWritten().then(() => store.close()) };
  };

  /** Every listing and tag filter a full parse gives, by type (ids). */
  const listings = (items: readonly Item[], tag?: string) =>
    ITEM_TYPES.map((type) =>
      items
        .filter(
          (i) => i.type === type && (tag === undefined || i.tags.some((t) => t.toLowerCase() === tag.toLowerCase())),
        )
        .sort(compareNewestFirst)
        .map((i) => i.id),
    );
  const listed = (content: ContentService, tag?: string) =>
    ITEM_TYPES.map((type) =>
      content.list(type, { limit: 1000, offset: 0, ...(tag ? { tag } : {}) }).items.map((i) => i.id),
    );

  it('a listing after a start from the catalogue parses only its page, sorted and tag-filtered as a full parse lists', async () => {
    await fill();
    // Writes after the catalogue (replayed from the log at the start, not ranked by it), one moving an item to the top.
    const w = await open(1 << 30);
    await w.store.write([
      { ...item('late', 11), date: '2027-01-01' },
      { ...item('i-8', 12), date: '2027-02-01' },
      item('i-9', 13),
    ]);
    await w.store.close();
    const expected = await parsedAll();
    const s = await service();
    expect(s.lines.some((l) => l.msg === 'content store loaded' && l.catalogue === true)).toBe(true);
    const articles = listings(expected)[0];
    const page = s.content.list('article', { limit: 3, offset: 2 });
    expect(page.items.map((i) => i.id)).toEqual(articles.slice(2, 5));
    expect(page.total).toBe(articles.length);
    // The page's items are served packed, as held: reading their ids parsed none of them.
    expect(page.items.map((i) => wasParsed(i))).toEqual([false, false, false]);
    expect(s.parsed()).toBeLessThanOrEqual(3);
    // A tag filter reads the catalogue's tags, not the records.
    const before = s.parsed();
    const tagged = s.content.list('article', { limit: 2, offset: 1, tag: 'COMMON' });
    expect(tagged.items.map((i) => i.id)).toEqual(listings(expected, 'common')[0].slice(1, 3));
    expect(s.parsed() - before).toBeLessThanOrEqual(2);
    // Whole listings agree with a full parse, and writes after the start are merged in.
    expect(listed(s.content)).toEqual(listings(expected));
    for (const tag of ['tag-3', 'Common', 'absent']) expect(listed(s.content, tag)).toEqual(listings(expected, tag));
    await s.content.ingest([
      { id: 'i-1', type: 'project', title: 'moved', body: '', tags: ['tag-3'], date: '2028-01-01' },
    ]);
    const now = [...expected.filter((i) => i.id !== 'i-1'), s.content.get('i-1')!];
    expect(listed(s.content)).toEqual(listings(now));
    expect(listed(s.content, 'TAG-3')).toEqual(listings(now, 'tag-3'));
    expect(listed(s.content, 'common')).toEqual(listings(now, 'common'));
    await s.close();
  });

  it('a catalogue of the older shape (no listing keys) is still used, and replaced by one with them after the start', async () => {
    await fill();
    const file = join(dir, CATALOGUE_FILE);
    const old = encodeCatalogue({ ...decodeCatalogue(readFileSync(file)), listing: undefined });
    expect(old.toString('utf8', 0, 300)).toContain(OLD_CATALOGUE_KEY);
    writeFileSync(file, old);
    const expected = await parsedAll();
    const s = await open(4096);
    expect(s.fromCatalogue).toBe(true);
    expect(s.lines.some((l) => String(l.msg).startsWith('content catalogue has no listing keys'))).toBe(true);
    expect(seen(s.items)).toEqual(seen(expected));
    await s.store.close();
    expect(decodeCatalogue(readFileSync(file)).listing).toBeDefined();
    // Listings from the old shape (items parsed to sort) and from the new one agree.
    writeFileSync(file, old);
    const a = await service();
    const fromOld = [listed(a.content), listed(a.content, 'common')];
    await a.close();
    const b = await service();
    expect(b.lines.some((l) => String(l.msg).startsWith('content catalogue has no listing keys'))).toBe(false);
    expect([listed(b.content), listed(b.content, 'common')]).toEqual(fromOld);
    expect(fromOld).toEqual([listings(expected), listings(expected, 'common')]);
    await b.close();
  });

  it('a catalogue whose items hold no tag at all (an empty section) is used', async () => {
    const w = await open(4096);
    await w.store.write([0, 1, 2].map((n) => ({ ...item(`bare-${n}`, n), tags: [] })));
    await w.store.close();
    const s = await open(4096);
    expect(s.fromCatalogue).toBe(true);
    expect(seen(s.items)).toEqual(seen(await parsedAll()));
    await s.store.close();
  });
});
