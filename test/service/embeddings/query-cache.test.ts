import { EmbeddingError, QueryEmbeddingCache, queryKey, type Embedder } from '../../../service/embeddings';

/** An embedder that counts its calls and answers when told (a real provider is in openai-embedder.test.ts). */
function countingEmbedder(fail = false): Embedder & { calls: string[][]; release: () => void } {
  let release: () => void = () => undefined;
  const gate = () => new Promise<void>((r) => (release = r));
  const e = {
    model: 'm',
    dimensions: 2,
    calls: [] as string[][],
    release: () => release(),
    async embed(texts: readonly string[]) {
      e.calls.push([...texts]);
      await gate();
      if (fail) throw new EmbeddingError('server_error', 'down');
      return { vectors: texts.map((t) => Float32Array.of(t.length, 1)), usage: { prompt_tokens: 1, total_tokens: 1 } };
    },
  };
  return e;
}

describe('QueryEmbeddingCache', () => {
  it('costs one provider call for a repeated query, and for the same query asked while its call is under way', async () => {
    const e = countingEmbedder();
    const cache = new QueryEmbeddingCache(e, 10);
    const a = cache.embedQuery('red  car ');
    const b = cache.embedQuery(' red car');
    e.release();
    expect(await a).toBe(await b);
    expect(await cache.embedQuery('red car')).toBe(await a);
    expect(e.calls).toEqual([['red car']]);
    expect(cache.size).toBe(1);
  });

  it('is bounded: past maxSize the least recently used query is dropped and costs a call again', async () => {
    const e = countingEmbedder();
    const cache = new QueryEmbeddingCache(e, 2);
    for (const q of ['one', 'two', 'three']) {
      const p = cache.embedQuery(q);
      e.release();
      await p;
    }
    expect(cache.size).toBe(2);
    const again = cache.embedQuery('one');
    e.release();
    await again;
    expect(e.calls.map((c) => c[0])).toEqual(['one', 'two', 'three', 'one']);
  });

  it('keeps no failure: the next ask calls again', async () => {
    const e = countingEmbedder(true);
    const cache = new QueryEmbeddingCache(e, 10);
    const p = cache.embedQuery('x');
    e.release();
    await expect(p).rejects.toThrow('down');
    const q = cache.embedQuery('x');
    e.release();
    await expect(q).rejects.toThrow('down');
    expect(e.calls).toHaveLength(2);
    expect(cache.size).toBe(0);
  });

  it('keeps nothing with size 0, and refuses a blank query', async () => {
    const e = countingEmbedder();
    const cache = new QueryEmbeddingCache(e, 0);
    for (let i = 0; i < 2; i++) {
      const p = cache.embedQuery('x');
      e.release();
      await p;
    }
    expect(e.calls).toHaveLength(2);
    await expect(cache.embedQuery(' \n ')).rejects.toThrow(RangeError);
    expect(queryKey('\ta  b\n')).toBe('a b');
  });
});
