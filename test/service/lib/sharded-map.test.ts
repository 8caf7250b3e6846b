import { ShardedMap } from '../../../service/lib/sharded-map';

describe('ShardedMap', () => {
  it('answers as one Map would, across its shards', () => {
    const m = new ShardedMap<number>();
    const ref = new Map<string, number>();
    const ids = ['', 'a', 'é', '日本', 'x'.repeat(300), ...Array.from({ length: 5000 }, (_, i) => `doc-${i}~${i % 7}`)];
    ids.forEach((id, i) => {
      m.set(id, i);
      ref.set(id, i);
    });
    for (let i = 0; i < ids.length; i += 3) {
      expect(m.delete(ids[i])).toBe(true);
      ref.delete(ids[i]);
    }
    expect(m.delete('absent')).toBe(false);
    m.set('a', 42);
    ref.set('a', 42);
    for (const id of [...ids, 'absent']) {
      expect(m.get(id)).toBe(ref.get(id));
      expect(m.has(id)).toBe(ref.has(id));
    }
    expect(m.size).toBe(ref.size);
  });
});
