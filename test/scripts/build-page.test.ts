import { readFileSync } from 'node:fs';
import { PAGE_BUNDLE, bundlePage } from '../../scripts/build-page';

describe('the search page script (service/web/assets/app.js)', () => {
  it('is the bundle of service/web/page/app.ts and the typed client (run `make page` to regenerate)', () => {
    const bundle = bundlePage();
    expect(readFileSync(PAGE_BUNDLE, 'utf8')).toBe(bundle);
    // The client's code, not a copy of its requests; nothing of Node's.
    expect(bundle).toContain('// service/http/contract/client.ts');
    expect(bundle).not.toMatch(/\brequire\(|node:/);
  });
});
