import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../../service/lib/logger';
import { contentKey, SemanticIndex } from '../../../service/search/semantic-index';
import { VECTOR_FILE, VectorStore } from '../../../service/search/vectors';
import { MemoryVectorFeed } from '../../helpers/memory-vector-feed';

const logger = silentLogger();
const DIMS = 4;
const unit = (i: number) => Array.from({ length: DIMS }, (_v, d) => (d === i % DIMS ? 1 : 0.1 * (d + 1)));

describe('SemanticIndex (issue 41: the search side of the vector feed)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'semantic-index-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const feedOf = (n: number) => {
    const feed = new MemoryVectorFeed();
    feed.put(...Array.from({ length: n }, (_v, i) => ({ id: `i${i}`, vector: unit(i), fingerprint: i + 1 })));
    return feed;
  };
  const open = (feed: MemoryVectorFeed, key = 'm/4') =>
    new SemanticIndex({ feed, dims: DIMS, key, store: new VectorStore({ dir, logger }), logger });

  it('reads the current vectors at start, then follows puts and removes (also those told during the start)', async () => {
    const feed = feedOf(3);
    const s = new SemanticIndex({ feed, dims: DIMS, key: 'm/4', logger });
    const started = s.start();
    feed.put({ id: 'late', vector: unit(3) });
    await started;
    expect(s.size).toBe(4);
    expect((await s.nearest(unit(3), 1))[0].id).toBe('late');
    feed.remove('late');
    expect((await s.nearest(unit(3), 4)).map((h) => h.id)).not.toContain('late');
    expect(s.status()).toBe('ok');
    s.queryFailed();
    expect(s.status()).toBe('degraded');
    s.queryEmbedded();
    expect(s.status()).toBe('ok');
    s.close();
  });

  it('is persisted on persist() and read back at the next start when made from the same content and key', async () => {
    const feed = feedOf(5);
    const first = open(feed);
    await first.start();
    expect(first.origin).toBe('rebuilt'); // no file yet
    await first.persist();
    first.close();
    const again = open(feed);
    await again.start();
    expect(again.origin).toBe('file');
    expect((await again.nearest(unit(2), 1))[0].id).toBe('i2');
    again.close();
  });

  it('rebuilds, never serves, a file of other content, of another key, or damaged', async () => {
    const feed = feedOf(5);
    const first = open(feed);
    await first.start();
    await first.persist();
    first.close();
    // An item changed while the service was down: its content version (fingerprint) differs.
    feed.put({ id: 'i1', vector: unit(3), fingerprint: 99 });
    const changed = open(feed);
    await changed.start();
    expect(changed.origin).toBe('rebuilt');
    expect((await changed.nearest(unit(3), 2)).map((h) => h.id)).toContain('i1');
    changed.close();
    const otherKey = open(feed, 'other-model/4');
    await otherKey.start();
    expect(otherKey.origin).toBe('rebuilt');
    await otherKey.persist();
    otherKey.close();
    const file = join(dir, VECTOR_FILE);
    const bytes = readFileSync(file);
    bytes[bytes.length - 5] ^= 0xff;
    writeFileSync(file, bytes);
    const damaged = open(feed, 'other-model/4');
    await damaged.start();
    expect(damaged.origin).toBe('rebuilt');
    expect(damaged.size).toBe(5);
    damaged.close();
  });

  it('contentKey does not depend on the order of the items', () => {
    const a = [
      { id: 'x', fingerprint: 1 },
      { id: 'y', fingerprint: 2 },
    ];
    expect(contentKey(a)).toBe(contentKey([...a].reverse()));
    expect(contentKey(a)).not.toBe(contentKey([{ id: 'x', fingerprint: 1 }]));
  });

  it('contentKey is the value persisted files hold (its computation may change, the key may not)', () => {
    expect(
      contentKey([
        { id: 'a', fingerprint: 1 },
        { id: 'ü€', fingerprint: 4294967295 },
      ]),
    ).toBe('353da2011a6aefbba5f804e5d7af66e5');
  });
});

describe('SemanticIndex at a restart (issue 41: ready before the vector index is loaded)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'semantic-restart-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('start() returns after startWaitMs while the persisted index loads: loading, with vectors; then ok, served from the file', async () => {
    const feed = new MemoryVectorFeed();
    feed.put(...Array.from({ length: 50 }, (_v, i) => ({ id: `i${i}`, vector: unit(i), fingerprint: i + 1 })));
    // Each over its own store of the same folder, as a restarted process would be.
    const over = (startWaitMs?: number) =>
      new SemanticIndex({
        feed,
        dims: DIMS,
        key: 'm/4',
        store: new VectorStore({ dir, logger }),
        logger,
        vectors: { exactBelow: 10 },
        ...(startWaitMs !== undefined && { startWaitMs }),
      });
    const first = over();
    await first.start();
    await first.persist();
    first.close();
    // startWaitMs 0: start() returns before the file is read (the read takes at least a turn of the loop).
    const again = over(0);
    await again.start();
    expect(again.loading).toBe(true);
    expect(again.status()).toBe('loading');
    expect(again.hasVectors).toBe(true);
    // A change told while loading applies after the load.
    feed.put({ id: 'late', vector: unit(3) });
    // nearest() waits for the load.
    const hits = await again.nearest(unit(2), 1);
    expect(hits[0].id).toBe('i2');
    expect(again.loading).toBe(false);
    expect(again.status()).toBe('ok');
    expect(again.origin).toBe('file');
    expect(again.size).toBe(51);
    again.close();
  });

  it('closed while loading: the loaded index is closed too (its graph worker ends)', async () => {
    const feed = new MemoryVectorFeed();
    feed.put(...Array.from({ length: 50 }, (_v, i) => ({ id: `i${i}`, vector: unit(i) })));
    const s = new SemanticIndex({ feed, dims: DIMS, key: 'm/4', logger, vectors: { exactBelow: 10 }, startWaitMs: 0 });
    await s.start();
    s.close();
    await s.loaded();
    expect(s.status()).toBe('ok');
    // The index built meanwhile was closed: its graph's worker thread is gone, queries are exact.
    expect((await s.nearest(unit(1), 1))[0].id).toBe('i1');
  });
});
