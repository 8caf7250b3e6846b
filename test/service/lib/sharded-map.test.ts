import { ShardedMap, shardOf } from '../../../service/lib/sharded-map';

describe('ShardedMap', () => {
  it('answers as one Map would, across its shards', () => {
    const m = new ShardedMap<number>();
    const ref = new Map<string, number>();
    const ids = ['', 'a', 'é', '日本', 'x'.repeat(300), ...Array.from({ length: 5000 }, (_, i) => `doc-${i}~${i % 7}`)];
    ids.forEach((id, i) => {
      m.set(id, i);
      ref.set(id, i);
    });
    // Each key's answers gathered and compared at once: an expect() per key (16,000 of them) was
    // most of this test's 2.4 s; a difference still names its keys.
    const notDeleted = ids.filter((id, i) => i % 3 === 0 && !(m.delete(id) && ref.delete(id)));
    expect(notDeleted).toEqual([]);
    expect(m.delete('absent')).toBe(false);
    m.set('a', 42);
    ref.set('a', 42);
    const answers = (map: Pick<Map<string, number>, 'get' | 'has'>) =>
      [...ids, 'absent'].map((id) => ({ id, get: map.get(id), has: map.has(id) }));
    expect(answers(m)).toEqual(answers(ref));
    expect(m.size).toBe(ref.size);
  });

  it('shrinks the shards most of whose keys were deleted, a shard a step, and answers the same between steps', () => {
    const m = new ShardedMap<number>();
    const ids = Array.from({ length: 40_000 }, (_, i) => `doc-${i}`);
    ids.forEach((id, i) => m.set(id, i));
    // A tenth deleted: no shard lost a third of its keys, nothing is copied.
    for (let i = 0; i < ids.length; i += 10) m.delete(ids[i]);
    expect([...m.compactSteps()]).toHaveLength(0);
    // Most of the rest deleted: every shard is copied, one a step.
    for (let i = 0; i < ids.length; i++) if (i % 10 !== 0 && i % 3 !== 0) m.delete(ids[i]);
    const steps = m.compactSteps();
    let n = 0;
    for (let r = steps.next(); !r.done; r = steps.next()) {
      n += 1;
      m.set(`new-${n}`, -n);
      // The keys that answer wrongly between steps, gathered: an expect() per key (105,000 over the
      // 256 steps) was most of this test's 12.5 s.
      const wrong: string[] = [];
      for (let i = 0; i < ids.length; i += 97) {
        const want = i % 10 !== 0 && i % 3 === 0 ? i : undefined;
        if (m.get(ids[i]) !== want) wrong.push(`${ids[i]} after step ${n}: ${m.get(ids[i])}, not ${want}`);
      }
      expect(wrong).toEqual([]);
    }
    expect(n).toBe(256);
    for (let k = 1; k <= n; k++) expect(m.get(`new-${k}`)).toBe(-k);
    expect(m.size).toBe(ids.filter((_, i) => i % 10 !== 0 && i % 3 === 0).length + n);
    expect([...m.compactSteps()]).toHaveLength(0);
  });
});

describe('shardOf', () => {
  // What a turn of 1,000 adds rehashes: the entries of every shard that reaches a power of two
  // (a Map's table doubles there). Equal shares made all shards reach one together (issue 41).
  const rehashedPerTurn = (keys: number, shard: (key: string) => number): number[] => {
    const sizes = new Map<number, number>();
    const turns: number[] = [];
    for (let i = 0; i < keys; i++) {
      const s = shard(`d${i}`);
      const n = (sizes.get(s) ?? 0) + 1;
      sizes.set(s, n);
      const t = Math.floor(i / 1000);
      if ((n & (n - 1)) === 0) turns[t] = (turns[t] ?? 0) + n;
    }
    return turns.filter((x) => x !== undefined);
  };

  it('gives the shards shares spread over an octave, so they do not grow together', () => {
    const sizes = new Map<number, number>();
    for (let i = 0; i < 300_000; i++) {
      const s = shardOf(`d${i}`);
      sizes.set(s, (sizes.get(s) ?? 0) + 1);
    }
    const counts = [...sizes.values()];
    expect(sizes.size).toBe(256);
    expect(Math.max(...counts) / Math.min(...counts)).toBeGreaterThan(1.7);
    expect(Math.max(...counts) / Math.min(...counts)).toBeLessThan(2.4);
    // 128 equal shares rehashed 16,384 entries in one turn at 262,144 keys (and 32,768 at 524,288).
    expect(Math.max(...rehashedPerTurn(300_000, shardOf))).toBeLessThanOrEqual(8192);
  });
});
