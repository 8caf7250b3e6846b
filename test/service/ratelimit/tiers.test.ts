import { parseSettings, type SettingsInput } from '../../../configs';
import { OPERATIONAL_PATHS } from '../../../service/metrics/request-types';
import { TierResolver } from '../../../service/ratelimit/tiers';

const resolver = (input: SettingsInput = {}) => new TierResolver(parseSettings(input).rateLimit);
const tierOf = (r: TierResolver, method: string, path: string) => {
  const plan = r.resolve(path, method);
  if (plan === undefined) return 'exempt';
  if (plan === r.unrouted) return 'ip-only';
  return plan.endpoint ?? 'base';
};

describe('TierResolver', () => {
  const r = resolver();

  it.each([
    ['GET', '/api/search', 'search'],
    ['GET', '/api/search/suggest', 'ip-only'],
    ['POST', '/api/search', 'search'],
    ['GET', '/api/searchx', 'ip-only'],
    ['DELETE', '/api/search', 'ip-only'],
    ['GET', '/api/eval', 'search'],
    ['GET', '/api/v1/articles/42', 'search'],
    ['GET', '/api/v1/projects', 'search'],
    ['GET', '/api/v1/experiences/x', 'search'],
    ['GET', '/api/v1/experiences/x/y', 'ip-only'],
    ['POST', '/api/chat', 'chat'],
    ['POST', '/api/v1/chat', 'chat'],
    ['GET', '/api/chat', 'ip-only'],
    ['POST', '/api/ingest', 'upload'],
    ['POST', '/api/ingest-batch', 'upload'],
    ['PUT', '/api/upload/file.md', 'ip-only'],
    ['PATCH', '/api/upload', 'ip-only'],
    ['GET', '/api/upload', 'ip-only'],
    ['GET', '/api/export/articles.json', 'upload'],
    ['GET', '/api/export', 'upload'],
    ['POST', '/api/export', 'ip-only'],
    ['GET', '/api/exports', 'ip-only'],
    ['GET', '/', 'ip-only'],
    ['GET', '/nope', 'ip-only'],
    ['GET', '/wp-admin/setup.php', 'ip-only'],
  ])('%s %s → %s', (method, path, expected) => {
    expect(tierOf(r, method, path)).toBe(expected);
  });

  it('matches methods case-insensitively and HEAD as GET', () => {
    expect(tierOf(r, 'get', '/api/search')).toBe('search');
    expect(tierOf(r, 'post', '/api/chat')).toBe('chat');
    expect(tierOf(r, 'HEAD', '/api/search')).toBe('search');
    expect(tierOf(r, 'HEAD', '/api/export/x')).toBe('upload');
    expect(tierOf(r, 'HEAD', '/api/ingest')).toBe('ip-only');
    expect(tierOf(r, 'OPTIONS', '/api/search')).toBe('ip-only');
  });

  it('matches paths case-insensitively (Express routes /API/Search to the search handler)', () => {
    expect(tierOf(r, 'GET', '/API/Search')).toBe('search');
    expect(tierOf(r, 'GET', '/API/SEARCH/')).toBe('search');
    expect(tierOf(r, 'POST', '/Api/V1/Chat')).toBe('chat');
    expect(tierOf(r, 'POST', '/Api/V1/Chat/x')).toBe('ip-only');
  });

  it('exempts every operational endpoint, with or without a trailing slash', () => {
    for (const p of OPERATIONAL_PATHS) {
      expect(tierOf(r, 'GET', p)).toBe('exempt');
      expect(tierOf(r, 'GET', `${p}/`)).toBe('exempt');
    }
    expect(OPERATIONAL_PATHS).toEqual(
      expect.arrayContaining([
        '/health',
        '/health/ready',
        '/health/live',
        '/metrics',
        '/api/rate-limit',
        '/api/metrics/prometheus',
        '/api/health',
      ]),
    );
    // Below an operational path is an ordinary path.
    expect(tierOf(r, 'GET', '/health/other')).toBe('ip-only');
    expect(tierOf(r, 'GET', '/metricsx')).toBe('ip-only');
    // Case-insensitive, as the ops router answers them.
    expect(tierOf(r, 'GET', '/HEALTH/Ready')).toBe('exempt');
  });

  it('follows the configured mapping: /api/v1 reads back to IP + Global only', () => {
    const custom = resolver({
      rateLimit: { mapping: { search: { paths: ['/api/search', '/api/eval'], methods: ['GET', 'POST'] } } },
    });
    expect(tierOf(custom, 'GET', '/api/v1/articles/1')).toBe('base');
    expect(tierOf(custom, 'GET', '/api/search')).toBe('search');
  });

  it('maps export paths and methods into the upload tier, as configured', () => {
    const custom = resolver({
      rateLimit: {
        mapping: {
          search: { paths: ['/api/search'], methods: ['GET', 'POST'] },
          export: { paths: ['/api/v1/articles'], methods: ['GET'] },
        },
      },
    });
    expect(tierOf(custom, 'GET', '/api/v1/articles/x')).toBe('upload');
    expect(tierOf(custom, 'GET', '/api/export/x')).toBe('base');
  });

  it('prefers the longest matching prefix, and falls back to shorter ones by method', () => {
    const custom = resolver({
      rateLimit: {
        mapping: {
          search: { paths: ['/api'], methods: ['GET'] },
          chat: { paths: ['/api/v1'], methods: ['POST'] },
        },
      },
    });
    expect(tierOf(custom, 'POST', '/api/v1/chat')).toBe('chat');
    expect(tierOf(custom, 'GET', '/api/v1/articles')).toBe('search');
    expect(tierOf(custom, 'GET', '/api/eval')).toBe('search');
    expect(tierOf(custom, 'POST', '/api/chat')).toBe('base');
    // A prefix covers only what is routed below it.
    expect(tierOf(custom, 'GET', '/api/anything')).toBe('ip-only');
  });

  it('builds each plan once: global, ip, then the endpoint tier, with the effective limits', () => {
    const dev = resolver({ service: { environment: 'development' } });
    const plan = dev.resolve('/api/search', 'GET')!;
    expect(dev.resolve('/API/SEARCH/', 'GET')).toBe(plan);
    expect(plan.tiers.map((t) => [t.name, t.limits])).toEqual([
      ['global', { limit: 5000, windowSeconds: 3600, burst: 500 }],
      ['ip', { limit: 500, windowSeconds: 60, burst: 100 }],
      ['search', { limit: 300, windowSeconds: 60, burst: 75 }],
    ]);
    expect(plan.tiers.map((t) => t.gcra)).toEqual([
      { limit: 5000, windowMs: 3600000, burst: 500, capacity: 1800000000 },
      { limit: 500, windowMs: 60000, burst: 100, capacity: 6000000 },
      { limit: 300, windowMs: 60000, burst: 75, capacity: 4500000 },
    ]);
    expect(plan.policy).toBe('"global";q=5000;w=3600, "ip";q=500;w=60, "search";q=300;w=60');
    expect(plan.keys('203.0.113.9')).toEqual([
      'ratelimit:global',
      'ratelimit:ip:203.0.113.9',
      'ratelimit:search:203.0.113.9',
    ]);
    expect(dev.base.keys('203.0.113.9')).toEqual(['ratelimit:global', 'ratelimit:ip:203.0.113.9']);
    // Unrouted requests: the ip tier alone, on the same ip key (a scanner drains its own bucket).
    expect(dev.unrouted.tiers.map((t) => t.name)).toEqual(['ip']);
    expect(dev.unrouted.endpoint).toBeUndefined();
    expect(dev.unrouted.policy).toBe('"ip";q=500;w=60');
    expect(dev.unrouted.keys('203.0.113.9')).toEqual(['ratelimit:ip:203.0.113.9']);
  });
});
