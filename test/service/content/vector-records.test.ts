import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VectorRecord } from '../../../service/content/content-store';
import { FileContentStore } from '../../../service/content/file-store/file-content-store';
import { VECTOR_LOG_FILE } from '../../../service/content/file-store/vector-log';
import type { RedisContentStore } from '../../../service/content/redis-store/redis-content-store';
import { decodeVectorRecord, encodeVectorRecord } from '../../../service/content/vector-record';
import type { FeatureSet } from '../../../service/features';
import { silentLogger } from '../../../service/lib/logger';
import { buildTestApp } from '../../helpers/app';
import { testItem, withTempDir } from '../../helpers/file-content-store';
import { redisServerForSuite } from '../../helpers/redis-server';

/** The stores' vector records (issue 41): their bytes, the conditional write, deletes, a damaged log. */

const record = (id: string, fingerprint: number, x = 0.5): VectorRecord => ({
  id,
  fingerprint,
  source: 'model/3',
  textHash: 'abc',
  vectors: [Float32Array.from([x, 1, 2]), Float32Array.from([3, 4, x])],
});

const plain = (r: VectorRecord) => ({ ...r, vectors: r.vectors.map((v) => [...v]) });

it('a record survives its bytes (float32, 4 bytes a number); other bytes decode to nothing', () => {
  const r = record('café-1', 0xfffffff0);
  const bytes = encodeVectorRecord(r);
  expect(plain(decodeVectorRecord(bytes)!)).toEqual(plain(r));
  expect(bytes.length).toBeLessThan(100);
  expect(decodeVectorRecord(bytes.subarray(0, bytes.length - 1))).toBeUndefined();
  expect(decodeVectorRecord(Buffer.from('{"id":"x"}'))).toBeUndefined();
});

describe('the file store`s vector log', () => {
  const open = async (dir: string) => {
    const store = new FileContentStore({ dir, logger: silentLogger() });
    await store.load();
    return store;
  };

  it('writes a record only while the item is at its version; forgets deleted items; reads them back after a restart', async () => {
    await withTempDir('vector-log-', async (dir) => {
      const store = await open(dir);
      await store.write([testItem('a', 'x'), testItem('b', 'y')]);
      const at = testItem('a', 'x').updated_at;
      expect(
        await store.vectors.write([
          { record: record('a', 1), updatedAt: at },
          { record: record('b', 2), updatedAt: '1999-01-01T00:00:00.000Z' },
          { record: record('gone', 3), updatedAt: at },
        ]),
      ).toEqual(['a']);
      await store.write([testItem('b', 'y')]);
      expect(await store.vectors.write([{ record: record('b', 2), updatedAt: at }])).toEqual(['b']);
      await store.write([], ['b']);
      expect((await store.vectors.load()).map((r) => r.id)).toEqual(['a']);
      await store.close();
      const again = await open(dir);
      expect((await again.vectors.load()).map(plain)).toEqual([plain(record('a', 1))]);
      await again.close();
    });
  });

  it('a torn or damaged tail costs the records after it, never the ones before', async () => {
    await withTempDir('vector-log-', async (dir) => {
      const store = await open(dir);
      await store.write([testItem('a', 'x'), testItem('b', 'y')]);
      const at = testItem('a', 'x').updated_at;
      await store.vectors.write([{ record: record('a', 1), updatedAt: at }]);
      await store.vectors.write([{ record: record('b', 2), updatedAt: at }]);
      await store.close();
      const file = join(dir, VECTOR_LOG_FILE);
      const whole = readFileSync(file);
      writeFileSync(file, whole.subarray(0, whole.length - 3));
      appendFileSync(file, Buffer.from('garbage'));
      const again = await open(dir);
      expect((await again.vectors.load()).map((r) => r.id)).toEqual(['a']);
      await again.close();
    });
  });
});

describe('the Redis store`s vectors', () => {
  const redis = redisServerForSuite();

  it('are written only while the item is at their version, and a delete removes them in its own write', async () => {
    const t = await buildTestApp({ service: { environment: 'testing' }, kvstore: { url: redis.server.url } });
    try {
      const content = (t.deps.features as FeatureSet).context.content;
      const store = content.store as RedisContentStore;
      const [item] = await content.ingest([{ id: 'r1', type: 'article', title: 'R1', body: 'x' }]);
      expect(
        await store.vectors.write([
          { record: record('r1', 7), updatedAt: item.updated_at },
          { record: record('r2', 8), updatedAt: item.updated_at },
        ]),
      ).toEqual(['r1']);
      expect(await store.vectors.write([{ record: record('r1', 9), updatedAt: '1999-01-01T00:00:00.000Z' }])).toEqual(
        [],
      );
      expect((await store.vectors.getMany(['r1'])).map((r) => r.fingerprint)).toEqual([7]);
      expect(await store.vectors.claim('r1', 7, 60_000)).toBe(true);
      expect(await store.vectors.claim('r1', 7, 60_000)).toBe(false);
      await store.vectors.release('r1', 7);
      expect(await store.vectors.claim('r1', 7, 60_000)).toBe(true);
      await content.write({ delete: ['r1'] });
      expect(await redis.client.hexists('svc-ai-search:content:vectors', 'r1')).toBe(0);
      expect(await store.vectors.load()).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
