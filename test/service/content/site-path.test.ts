import fc from 'fast-check';
import { isSitePath, validateItem } from '../../../service/content/item';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

const BASE = 'https://site.invalid';

/** Characters that make URL parsers do something: separators, dots, controls, spaces, encodings. */
const TRICKY = fc.constantFrom(
  '/',
  '\\',
  '.',
  '..',
  '\t',
  '\n',
  '\r',
  ' ',
  '\u00a0',
  '\u0000',
  '%2F',
  '%5C',
  '@',
  ':',
  '?',
  '#',
  'a',
  'evil.example',
  'x',
);

describe('isSitePath (issue 29, item 8)', () => {
  it(
    'accepts only what a WHATWG URL parser (as browsers) resolves on the site, and never to a // path',
    () => {
      fc.assert(
        fc.property(fc.array(TRICKY, { maxLength: 8 }), (parts) => {
          const v = `/${parts.join('')}`;
          if (!isSitePath(v)) return;
          const u = new URL(v, BASE);
          expect(u.origin).toBe(BASE);
          expect(u.pathname.startsWith('//')).toBe(false);
          expect(/[\u0000-\u001f\u007f\\\s]/.test(v)).toBe(false);
        }),
        { numRuns: 5000, seed: 29 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it.each(['/\\evil.example/x', '//evil.example', '/\t/evil.example', '/..//evil.example', '/a\\b', '/a b'])(
    'refuses %j',
    (url) => {
      expect(isSitePath(url)).toBe(false);
      const v = validateItem({ type: 'article', title: 't', body: '', url });
      expect(v.ok).toBe(false);
    },
  );

  it.each(['/', '/docs/api.md#post-apiingest', '/search?q=a%20b', '/%2F%2Fevil.example', '/a/../b'])(
    'accepts %j',
    (url) => {
      expect(isSitePath(url)).toBe(true);
    },
  );
});
