import { DEFAULT_RATE_LIMIT, loadSettings, serviceEnvironment } from '../../../configs';

// The defaults are read from the route table (contract/routes.ts); the spec's table is spelled
// here, so a route added to or moved in the table that changes a default fails this test.
describe('the default tier mapping (spec §4.2, docs/rate-limiting.md)', () => {
  it('is exactly the spec’s paths and methods, in its order', () => {
    expect(DEFAULT_RATE_LIMIT.mapping).toEqual({
      chat: { paths: ['/api/chat', '/api/v1/chat'], methods: ['POST'] },
      search: {
        paths: ['/api/search', '/api/eval', '/api/v1/articles', '/api/v1/projects', '/api/v1/experiences'],
        methods: ['GET', 'POST'],
      },
      upload: { paths: ['/api/ingest', '/api/ingest-batch', '/api/upload'], methods: ['POST', 'PUT', 'PATCH'] },
      export: { paths: ['/api/export'], methods: ['GET'] },
    });
  });

  it('is what the ConfigMap writes for an unset environment', () => {
    const env = serviceEnvironment(loadSettings({}));
    expect([
      env.RATE_LIMIT_CHAT_PATHS,
      env.RATE_LIMIT_SEARCH_PATHS,
      env.RATE_LIMIT_UPLOAD_PATHS,
      env.RATE_LIMIT_EXPORT_PATHS,
    ]).toEqual([
      '/api/chat,/api/v1/chat',
      '/api/search,/api/eval,/api/v1/articles,/api/v1/projects,/api/v1/experiences',
      '/api/ingest,/api/ingest-batch,/api/upload',
      '/api/export',
    ]);
  });
});
