import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceProcess } from '../../tools/harness/service-process';
import { malformedAnswer } from './answers';
import { WIDE_LIMITS, hostileEnv } from './hostile-env';
import { watchLiveness } from './liveness';

/**
 * Issue 29, item 8, against the real service process: a `url` that browsers resolve off-site
 * (`/\evil.example/x`) passed as a "site path"; `/api/rate-limit` showed the raw forwarded value
 * as `client_ip` (`unknown`, `300.1.1.1`) while the limiter keyed on the socket address.
 */

const TOKEN = 'site-path-suite-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** Forms a browser resolves off-site, or that hide a separator: each is a 422 on `url`. */
const OFF_SITE = [
  '/\\evil.example/x',
  '/\\\\evil.example',
  '//evil.example/x',
  '/\t/evil.example',
  '/\n/evil.example',
  '/\r/evil.example',
  '/\\/evil.example',
  '/..//evil.example',
  '/.//evil.example',
  '/a\\b',
  '/a\u0000b',
  '/a\u001fb',
  '/a\u007fb',
  '/a b',
  '/a\u00a0b',
  '/a\u2028b',
  '\\\\evil.example/x',
  '\\/evil.example',
  'https://evil.example/\u0000',
  'javascript:alert(1)',
  '//',
];

/** Site paths that stay on the site: stored as sent. */
const ON_SITE = [
  '/',
  '/articles/kubernetes',
  '/docs/api.md#post-apiingest',
  '/search?q=a%20b&x=%5C',
  '/%2F%2Fevil.example',
  '/a/../b',
  'https://example.org/x',
];

describe('site paths and the reported client address (issue 29, item 8)', () => {
  let svc: ServiceProcess;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-sitepath-'));
    svc = await ServiceProcess.start({
      env: hostileEnv(TOKEN, {
        ...WIDE_LIMITS,
        DATA_DIR: dataDir,
        // One proxy hop trusted: X-Forwarded-For is read, as behind an ingress.
        TRUST_PROXY: '1',
        RATE_LIMIT_IP_REQUESTS: '3',
        RATE_LIMIT_IP_BURST: '3',
        RATE_LIMIT_IP_WINDOW: '3600',
      }),
    });
  }, 60000);

  afterAll(async () => {
    await svc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('every off-site or separator-hiding url is a 422 on url; on-site paths are stored as sent', async () => {
    const watch = await watchLiveness(svc.port);
    for (const [i, url] of OFF_SITE.entries()) {
      // Each from its own address: the ip tier is kept small for the next test.
      const res = await svc.request('/api/ingest', {
        method: 'POST',
        from: `127.0.1.${i + 1}`,
        headers: AUTH,
        body: { type: 'article', title: `Off ${i}`, body: 'x', url },
      });
      expect({ url, status: res.status }).toEqual({ url, status: 422 });
      expect(malformedAnswer(res)).toBeUndefined();
      expect(res.json<{ field: string }>().field).toBe('url');
    }
    const batch = await svc.request('/api/ingest-batch', {
      method: 'POST',
      from: '127.0.2.1',
      headers: AUTH,
      body: { items: ON_SITE.map((url, i) => ({ type: 'article', title: `On ${i}`, body: 'x', url })) },
    });
    expect(batch.status).toBe(201);
    for (const [i, url] of ON_SITE.entries()) {
      const item = await svc.request(`/api/v1/articles/on-${i}`, { from: `127.0.3.${i + 1}` });
      expect(item.json<{ url: string }>().url).toBe(url);
    }
    // Nothing off-site was stored.
    expect(
      (await svc.request('/api/v1/articles?limit=100', { from: '127.0.2.2' })).json<{ total: number }>().total,
    ).toBe(ON_SITE.length);
    expect((await watch.stop()).missed).toEqual([]);
  });

  test('/api/rate-limit shows the key the limiter charges: the socket address for a forwarded value that is not an address', async () => {
    const from = '127.0.0.77';
    const status = async (forwarded: string) => {
      const res = await svc.request('/api/rate-limit', { from, headers: { 'x-forwarded-for': forwarded } });
      expect(res.status).toBe(200);
      return res.json<{ client_ip: string }>().client_ip;
    };
    expect(await status('unknown')).toBe(from);
    expect(await status('300.1.1.1')).toBe(from);
    expect(await status('203.0.113.7')).toBe('203.0.113.7');
    expect(await status('[2001:db8:1:2::7]:443')).toBe('2001:db8:1:2::/64');
    // The limiter charges exactly that key: three requests forwarded as `unknown` use up the ip
    // tier of 127.0.0.77, so a fourth forwarded as `300.1.1.1` (the same key) is refused, while
    // 203.0.113.7 (its own key) from the same socket is not.
    for (let i = 0; i < 3; i++) {
      expect((await svc.request('/api/v1/articles', { from, headers: { 'x-forwarded-for': 'unknown' } })).status).toBe(
        200,
      );
    }
    expect((await svc.request('/api/v1/articles', { from, headers: { 'x-forwarded-for': '300.1.1.1' } })).status).toBe(
      429,
    );
    expect(
      (await svc.request('/api/v1/articles', { from, headers: { 'x-forwarded-for': '203.0.113.7' } })).status,
    ).toBe(200);
  });
});
