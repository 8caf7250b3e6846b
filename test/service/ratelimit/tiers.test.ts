import { parseSettings, type SettingsInput } from '../../../configs';
import { OPERATIONAL_PATHS } from '../../../service/metrics/request-types';
import { TierResolver } from '../../../service/ratelimit/tiers';

const resolver = (input: SettingsInput = {}) => new TierResolver(parseSettings(input).rateLimit);
const tierOf = (r: TierResolver, method: string, path: string) => {
  const plan = r.resolve(path, method);
  return plan === undefined ? 'exempt' : (plan.endpoint ?? 'base');
};

describe('TierResolver', () => {
  const r = resolver();

  it.each([
    ['GET', '/api/search', 'search'],
    ['GET', '/api/search/suggest', 'search'],
    ['POST', '/api/search', 'search'],
    ['GET', '/api/searchx', 'base'],
    ['DELETE', '/api/search', 'base'],
    ['GET', '/api/eval', 'search'],
    ['GET', '/api/v1/articles/42', 'search'],
    ['GET', '/api/v1/projects', 'search'],
    ['GET', '/api/v1/experiences/x/y', 'search'],
    ['POST', '/api/chat', 'chat'],
    ['POST', '/api/v1/chat', 'chat'],
    ['GET', '/api/chat', 'base'],
    ['POST', '/api/ingest', 'upload'],
    ['POST', '/api/ingest-batch', 'upload'],
    ['PUT', '/api/upload/file.md', 'upload'],
    ['PATCH', '/api/upload', 'upload'],
    ['GET', '/api/upload', 'base'],
    ['GET', '/api/export/articles.json', 'upload'],
    ['GET', '/api/export', 'upload'],
    ['POST', '/api/export', 'base'],
    ['GET', '/api/exports', 'base'],
    ['GET', '/', 'base'],
    ['GET', '/nope', 'base'],
  ])('%s %s → %s', (method, path, expected) => {
    expect(tierOf(r, method, path)).toBe(expected);
  });

  it('matches methods case-insensitively and HEAD as GET', () => {
    expect(tierOf(r, 'get', '/api/search')).toBe('search');
    expect(tierOf(r, 'post', '/api/chat')).toBe('chat');
    expect(tierOf(r, 'HEAD', '/api/search')).toBe('search');
    expect(tierOf(r, 'HEAD', '/api/export/x')).toBe('upload');
    expect(tierOf(r, 'HEAD', '/api/ingest')).toBe('base');
  });

  it('matches paths case-insensitively (Express routes /API/Search to the search handler)', () => {
    expect(tierOf(r, 'GET', '/API/Search')).toBe('search');
    expect(tierOf(r, 'POST', '/Api/V1/Chat/x')).toBe('chat');
  });

  it('exempts every operational endpoint, with or without a trailing slash', () => {
    for (const p of OPERATIONAL_PATHS) {
      expect(tierOf(r, 'GET', p)).toBe('exempt');
      expect(tierOf(r, 'GET', `${p}/`)).toBe('exempt');
    }
    expect(OPERATIONAL_PATHS).toEqual(
      expect.arrayContaining(['/health', '/health/ready', '/health/live', '/metrics', '/api/rate-limit', '/api/metrics/prometheus', '/api/health']),
    );
    // Below an operational path is an ordinary path.
    expect(tierOf(r, 'GET', '/health/other')).toBe('base');
    expect(tierOf(r, 'GET', '/metricsx')).toBe('base');
  });

  it('follows the configured mapping: /api/v1 reads back to IP + Global only', () => {
    const custom = resolver({ rateLimit: { mapping: { search: { paths: ['/api/search', '/api/eval'], methods: ['GET', 'POST'] } } } });
    expect(tierOf(custom, 'GET', '/api/v1/articles/1')).toBe('base');
    expect(tierOf(custom, 'GET', '/api/search')).toBe('search');
  });

  it('maps export paths and methods into the upload tier, as configured', () => {
    const custom = resolver({ rateLimit: { mapping: { export: { paths: ['/api/dump'], methods: ['GET', 'POST'] } } } });
    expect(tierOf(custom, 'POST', '/api/dump/x')).toBe('upload');
    expect(tierOf(custom, 'GET', '/api/export/x')).toBe('base');
  });

  it('prefers the longest matching prefix, and falls back to shorter ones by method', () => {
    const custom = resolver({
      rateLimit: {
        mapping: {
          search: { paths: ['/api'], methods: ['GET'] },
          chat: { paths: ['/api/chat'], methods: ['POST'] },
        },
      },
    });
    expect(tierOf(custom, 'POST', '/api/chat/x')).toBe('chat');
    expect(tierOf(custom, 'GET', '/api/chat/x')).toBe('search');
    expect(tierOf(custom, 'GET', '/api/anything')).toBe('search');
    expect(tierOf(custom, 'GET', '/apix')).toBe('base');
  });

  it('builds each plan once: global, ip, then the endpoint tier, with the effective limits', () => {
    const dev = resolver({ service: { environment: 'development' } });
    const plan = dev.resolve('/api/search', 'GET')!;
    expect(dev.resolve('/api/search/x', 'GET')).toBe(plan);
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
    expect(plan.keys('203.0.113.9')).toEqual(['ratelimit:global', 'ratelimit:ip:203.0.113.9', 'ratelimit:search:203.0.113.9']);
    expect(dev.base.keys('203.0.113.9')).toEqual(['ratelimit:global', 'ratelimit:ip:203.0.113.9']);
  });
});
