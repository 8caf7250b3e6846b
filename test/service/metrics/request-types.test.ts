import { isOperationalPath, requestTypeOf, underPrefix } from '../../../service/metrics/request-types';

describe('request types', () => {
  it.each([
    ['/api/search', 'search'], ['/api/search/x', 'search'], ['/api/searchx', 'other'],
    ['/api/chat', 'chat'], ['/api/v1/chat', 'chat'], ['/api/ingest', 'ingest'], ['/api/ingest-batch', 'ingest'],
    ['/api/upload', 'upload'], ['/api/export/all.json', 'export'], ['/api/eval', 'eval'],
    ['/api/v1/articles', 'content'], ['/api/v1/projects/p1', 'content'], ['/api/v1/experiences', 'content'],
    ['/', 'other'], ['/api/v2/articles', 'other'],
  ])('%s → %s', (path, type) => {
    expect(requestTypeOf(path)).toBe(type);
  });

  it('matches prefixes on segment boundaries', () => {
    expect(underPrefix('/api/search', '/api/search')).toBe(true);
    expect(underPrefix('/api/search/', '/api/search')).toBe(true);
    expect(underPrefix('/api/searching', '/api/search')).toBe(false);
  });

  it('knows the operational endpoints of spec §4.1', () => {
    for (const p of ['/api/metrics/prometheus', '/api/health', '/health', '/health/ready', '/health/live', '/metrics', '/api/rate-limit', '/health/']) {
      expect(isOperationalPath(p)).toBe(true);
    }
    expect(isOperationalPath('/api/search')).toBe(false);
    expect(isOperationalPath('/healthz')).toBe(false);
  });
});
