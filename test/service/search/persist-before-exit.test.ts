import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capture } from '../../helpers/log-capture';
import type { Item } from '../../../service/content/item';
import { CompactIndex } from '../../../service/search/index/compact-index';
import type { SealedIndex } from '../../../service/search/index/merge';
import { EmbeddedIndex } from '../../../service/search/embedded-index';
import { SEGMENT_KEY } from '../../../service/search/index-lifecycle';
import { SEGMENT_FILE, SegmentStore } from '../../../service/search/index/segment-store';

/**
 * `EmbeddedIndex.persistBeforeExit` (issue 37: a graceful stop leaves an intact segment): what
 * was appended since the last merge is merged and written before the stores close; out of
 * budget, the file keeps the last segment written whole, and the next start serves the content
 * exactly (re-indexing what the segment lacks). The process-level proof is
 * segment-on-shutdown.test.ts.
 */

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'photon', 'proton', 'laser', 'beam', 'kappa', 'theta'];
const at = (n: number) => new Date(Date.UTC(2026, 0, 1) + n).toISOString();
const item = (id: number, version = 0): Item => ({
  id: `d${id}`,
  type: 'article',
  title: `${WORDS[id % WORDS.length]} ${WORDS[(id * 3) % WORDS.length]}`,
  body: `${WORDS[(id * 7) % WORDS.length]} w${id} body ${version}`,
  tags: [],
  created_at: at(0),
  updated_at: at(version),
});
const corpus = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => item(from + i));

let dir: string;
const open: Array<{ index: EmbeddedIndex; segments: SegmentStore }> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'persist-exit-'));
});
afterEach(async () => {
  for (const { index, segments } of open.splice(0)) {
    await index.settled().catch(() => undefined);
    await segments.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

/** A replica start over `dir`; the idle checkpoint is far off (a minute), as after a bulk ingest. */
async function start(items: readonly Item[]) {
  const { logger, lines } = capture();
  const segments = new SegmentStore({ dir, logger });
  // minMergeDocs 16: merges during the ingest, an appended part left after the last one.
  const index = new EmbeddedIndex({ segments, minMergeDocs: 16, checkpointIdleMs: 60_000 });
  open.push({ index, segments });
  await index.replaceAll(items);
  const loaded = () => lines.find((l) => String(l.msg).startsWith('search index loaded from the persisted segment'));
  return { index, segments, lines, loaded };
}

/** Ids of every document matching `word`. */
async function ids(index: EmbeddedIndex, word: string): Promise<string[]> {
  const page = await index.search({ text: word, limit: 100, offset: 0, snippets: false });
  return page.hits.map((h) => h.id).sort();
}

describe('persistBeforeExit', () => {
  it('merges and writes what was appended since the last merge; the next start restores it and re-indexes nothing', async () => {
    const a = await start([]);
    expect(a.index.startedFrom).toEqual({ from: 'content', documents: 0, reindexed: 0 });
    await a.index.upsert(corpus(0, 90));
    await a.index.remove(['d3']);
    const r = await a.index.persistBeforeExit(60_000);
    expect(r).toMatchObject({ outcome: 'persisted', documents: 89 });
    expect(r.appended).toBeGreaterThan(0);
    expect(a.segments.current).toBe(true);
    await a.segments.close();
    expect(readdirSync(dir)).toEqual([SEGMENT_FILE]);

    const content = corpus(0, 90).filter((i) => i.id !== 'd3');
    const b = await start(content);
    expect(b.loaded()).toMatchObject({ documents: 89, changed: 0, removed: 0 });
    expect(b.index.startedFrom).toEqual({ from: 'segment', documents: 89, reindexed: 0 });
    for (const w of ['w0', 'w3', 'w89', 'photon']) expect(await ids(b.index, w)).toEqual(await ids(a.index, w));
  });

  it('with nothing appended since the last segment, writes nothing', async () => {
    const a = await start(corpus(0, 40));
    await a.index.settled();
    const writes = a.segments.writeCount;
    const bytes = readFileSync(join(dir, SEGMENT_FILE));
    expect(await a.index.persistBeforeExit(60_000)).toMatchObject({ outcome: 'current', documents: 40, appended: 0 });
    expect(a.segments.writeCount).toBe(writes);
    expect(readFileSync(join(dir, SEGMENT_FILE)).equals(bytes)).toBe(true);
  });

  it('out of budget, leaves the last segment written whole; the next start re-indexes what it lacks and serves the content', async () => {
    const a = await start(corpus(0, 40));
    await a.index.settled();
    const before = readFileSync(join(dir, SEGMENT_FILE));
    await a.index.upsert([...corpus(40, 50), item(5, 1)]);
    const r = await a.index.persistBeforeExit(0);
    // 11 documents appended, and d5's old version deleted from the base.
    expect(r).toMatchObject({ outcome: 'timed-out', documents: 50, appended: 12 });
    // Abandoned: no segment is written any more.
    await a.index.settled();
    expect(readdirSync(dir)).toEqual([SEGMENT_FILE]);
    expect(readFileSync(join(dir, SEGMENT_FILE)).equals(before)).toBe(true);

    const content = [...corpus(0, 50).filter((i) => i.id !== 'd5'), item(5, 1)];
    const b = await start(content);
    expect(b.loaded()).toMatchObject({ documents: 40, changed: 11, removed: 0 });
    expect(b.index.startedFrom).toEqual({ from: 'segment', documents: 50, reindexed: 11 });
    for (const w of ['w5', 'w45', 'photon', 'body']) expect(await ids(b.index, w)).toEqual(await ids(a.index, w));
  });

  it('a segment store abandoned while a write is being encoded stops it before the disk: the file in place stays', async () => {
    const a = await start(corpus(0, 30));
    await a.index.settled();
    const before = readFileSync(join(dir, SEGMENT_FILE));
    let sealed: SealedIndex | undefined;
    const c = new CompactIndex(['title', 'tags', 'text'], { onSealed: (s) => (sealed = s) });
    c.load('x1', [['alpha'], [], ['alpha', 'beta']]);
    c.seal();
    a.segments.save(sealed!, SEGMENT_KEY);
    a.segments.abandon();
    await a.segments.flush();
    await a.segments.close();
    expect(a.segments.current).toBe(false);
    expect(readdirSync(dir)).toEqual([SEGMENT_FILE]);
    expect(readFileSync(join(dir, SEGMENT_FILE)).equals(before)).toBe(true);
  });
});
