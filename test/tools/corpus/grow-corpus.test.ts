import { growCorpus, mulberry32, twoWordQueries, vocabulary } from '../../../tools/corpus/grow-corpus';
import { loadVaswani } from '../../../tools/corpus/vaswani';

const base = [
  { id: 'doc-1', title: 'Laser beams', body: 'the laser beam in a plasma wave guide' },
  { id: 'doc-2', title: 'Electron spin', body: 'spin resonance of electrons in metals' },
  { id: 'doc-3', title: 'Antennas', body: 'design of a dipole antenna array' },
];

describe('growCorpus', () => {
  it('is deterministic for the same input, size and seed', () => {
    expect(growCorpus(base, 50)).toEqual(growCorpus(base, 50));
    expect(growCorpus(base, 50, { seed: 7 })).not.toEqual(growCorpus(base, 50));
  });

  it('keeps copy 0 unchanged and gives every document a unique id', () => {
    const grown = growCorpus(base, 10);
    expect(grown).toHaveLength(10);
    expect(grown.slice(0, 3)).toEqual(base);
    expect(new Set(grown.map((d) => d.id)).size).toBe(10);
    expect(grown[3].id).toBe('doc-1~1');
    expect(grown[9].id).toBe('doc-1~3');
  });

  it('perturbs copies at about the given rate, with words of the collection or copy-suffixed ones', () => {
    const items = Array.from({ length: 200 }, (_, i) => ({
      id: `d${i}`,
      title: 'alpha beta',
      body: 'gamma delta epsilon zeta eta theta iota kappa',
    }));
    const grown = growCorpus(items, 400, { rate: 0.2 });
    const vocab = new Set(vocabulary(items));
    let changed = 0;
    let total = 0;
    for (const doc of grown.slice(200)) {
      const words = `${doc.title} ${doc.body}`.split(' ');
      total += words.length;
      for (const [i, w] of words.entries()) {
        const orig = `alpha beta gamma delta epsilon zeta eta theta iota kappa`.split(' ')[i];
        if (w !== orig) changed++;
        expect(vocab.has(w) || w === `${orig}1`).toBe(true);
      }
    }
    // Expected ≈ 0.25 minus replacements that drew the same word (1 in 10); a loose band.
    expect(changed / total).toBeGreaterThan(0.15);
    expect(changed / total).toBeLessThan(0.3);
  });

  it('returns a prefix when the size is below the collection and rejects bad sizes', () => {
    expect(growCorpus(base, 2)).toEqual(base.slice(0, 2));
    expect(growCorpus([], 5)).toEqual([]);
    expect(() => growCorpus(base, -1)).toThrow(RangeError);
    expect(() => growCorpus(base, 1.5)).toThrow(RangeError);
  });

  it('grows Vaswani deterministically at a small size', () => {
    const v = loadVaswani();
    const a = growCorpus(v.items, v.items.length + 500);
    expect(a).toHaveLength(v.items.length + 500);
    expect(a.slice(0, v.items.length)).toEqual(v.items);
    expect(a[v.items.length].id).toBe(`${v.items[0].id}~1`);
    expect(a[v.items.length].type).toBe('article');
    expect(growCorpus(v.items, v.items.length + 500).slice(-500)).toEqual(a.slice(-500));
  });
});

describe('mulberry32 and twoWordQueries', () => {
  it('yields a reproducible stream in [0, 1)', () => {
    const r1 = mulberry32(1);
    const r2 = mulberry32(1);
    for (let i = 0; i < 100; i++) {
      const x = r1();
      expect(x).toBe(r2());
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });

  it('takes the first two words of four letters or more', () => {
    expect(twoWordQueries(['measurement of dielectric constant of liquids', 'a b'])).toEqual([
      'measurement dielectric',
      'a b',
    ]);
  });
});
