import { knownItemCollection, packageItemId, parseDescriptions } from '../../../tools/corpus/debian-descriptions';

// A Translation-en excerpt in apt's format: synopsis on the Description-en line, the long description indented, " ." between paragraphs.
const FIXTURE = `Package: laser-sim
Description-md5: 0001
Description-en: simulator of laser beams in plasma waveguides
 This program simulates laser beam propagation through plasma wave guides,
 with electron density profiles read from measured data.
 .
 It writes the field intensity at every step.

Package: laser-sim-data
Description-md5: 0002
Description-en: data files for the plasma waveguide laser simulator
 This program simulates laser beam propagation through plasma wave guides,
 with electron density profiles read from measured data.
 .
 It writes the field intensity at every step.

Package: spin-fit
Description-md5: 0003
Description-en: fit electron spin resonance spectra of metals
 A tool that fits electron spin resonance spectra measured on metal samples
 and reports line widths and g factors with their errors.

Package: antenna-design
Description-md5: 0004
Description-en: design dipole antenna arrays
 Computes radiation patterns and input impedance of dipole antenna arrays
 for a chosen frequency band, and writes them as tables or plots.

Package: antenna-design-doc
Description-md5: 0005
Description-en: design dipole antenna arrays
 Manual of antenna-design in HTML and PDF, with examples of dipole arrays,
 radiation patterns, impedance matching and the file formats it writes.

Package: tiny
Description-md5: 0006
Description-en: a tiny package with a short description
 Too short to be a document.

Package: transitional-a
Description-md5: 0007
Description-en: transitional dummy package
 This is a transitional dummy package. It can safely be removed once the new
 package is installed, which it depends on; nothing else is in it at all.
`;

describe('parseDescriptions', () => {
  it('reads the package, the synopsis and the long description with paragraphs joined', () => {
    const d = parseDescriptions(FIXTURE);
    expect(d.map((x) => x.pkg)).toEqual([
      'laser-sim',
      'laser-sim-data',
      'spin-fit',
      'antenna-design',
      'antenna-design-doc',
      'tiny',
      'transitional-a',
    ]);
    expect(d[0]).toEqual({
      pkg: 'laser-sim',
      synopsis: 'simulator of laser beams in plasma waveguides',
      body: 'This program simulates laser beam propagation through plasma wave guides, with electron density profiles read from measured data. It writes the field intensity at every step.',
    });
  });
});

describe('knownItemCollection', () => {
  const c = knownItemCollection(parseDescriptions(FIXTURE), { queries: 10, maxSharing: 2 });

  it('keeps one document per distinct long description and drops short ones', () => {
    expect(c.items.map((i) => i.id)).toEqual(
      ['antenna-design', 'antenna-design-doc', 'laser-sim', 'spin-fit', 'transitional-a'].map(packageItemId),
    );
    expect(c.items[0]).toEqual({
      id: 'deb-antenna-design',
      type: 'article',
      title: 'antenna-design',
      body: expect.stringContaining('radiation patterns'),
    });
  });

  it('makes a synopsis the query of its own package only, and drops shared or too-short synopses', () => {
    // antenna-design's synopsis is also antenna-design-doc's; laser-sim-data's body was a copy; tiny has no document.
    expect(new Set(c.queries.map((q) => q.qid))).toEqual(new Set(['laser-sim', 'spin-fit', 'transitional-a']));
    for (const q of c.queries) expect([...c.qrels.get(q.qid)!]).toEqual([[packageItemId(q.qid), 1]]);
    expect(c.queries.find((q) => q.qid === 'spin-fit')!.text).toBe('fit electron spin resonance spectra of metals');
  });

  it('drops a synopsis when more than maxSharing documents hold most of its terms', () => {
    // A query's own document holds its terms, so maxSharing 0 drops every query.
    const strict = knownItemCollection(parseDescriptions(FIXTURE), { queries: 10, maxSharing: 1 });
    expect(strict.queries.length).toBeLessThanOrEqual(c.queries.length);
    expect(knownItemCollection(parseDescriptions(FIXTURE), { queries: 10, maxSharing: 0 }).queries).toEqual([]);
  });

  it('is deterministic and takes queries in the order of the hash of the package name', () => {
    expect(knownItemCollection(parseDescriptions(FIXTURE), { queries: 10, maxSharing: 2 })).toEqual(c);
    const two = knownItemCollection(parseDescriptions(FIXTURE), { queries: 2, maxSharing: 2 });
    expect(two.queries).toEqual(c.queries.slice(0, 2));
  });
});
