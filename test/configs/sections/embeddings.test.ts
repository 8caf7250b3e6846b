import {
  DEFAULT_EMBEDDINGS,
  embeddingsEndpoint,
  loadSettings,
  redactSettings,
  serviceEnvironment,
  SettingsError,
  type Env,
} from '../../../configs';

function errorOf(env: Env): SettingsError {
  try {
    loadSettings(env);
  } catch (e) {
    if (e instanceof SettingsError) return e;
    throw e;
  }
  throw new Error('no error');
}

describe('the embedder settings (configs/sections/embeddings.ts)', () => {
  it('is off by default, with the defaults of text-embedding-3-small', () => {
    const s = loadSettings({});
    expect(s.embeddings).toEqual(DEFAULT_EMBEDDINGS);
    expect(s.embeddings).toMatchObject({
      provider: 'none',
      model: 'text-embedding-3-small',
      dimensions: 1536,
      sendDimensions: false,
      encoding: 'float',
      batchSize: 32,
      timeoutMs: 30000,
      maxRetries: 3,
      retryMaxWaitMs: 30000,
      queryCacheSize: 1000,
      maxPassages: 32,
      claimLeaseMs: 300000,
    });
  });

  it('reads every variable', () => {
    const s = loadSettings({
      EMBEDDINGS_PROVIDER: 'OpenAI',
      EMBEDDINGS_BASE_URL: 'http://127.0.0.1:11434/v1',
      EMBEDDINGS_API_KEY: 'sk-emb-123456',
      EMBEDDINGS_MODEL: 'nomic-embed-text',
      EMBEDDINGS_DIMENSIONS: '768',
      EMBEDDINGS_SEND_DIMENSIONS: 'yes',
      EMBEDDINGS_ENCODING: 'base64',
      EMBEDDINGS_BATCH_SIZE: '16',
      EMBEDDINGS_TIMEOUT_MS: '5000',
      EMBEDDINGS_MAX_RETRIES: '0',
      EMBEDDINGS_RETRY_MAX_WAIT_MS: '1000',
      EMBEDDINGS_QUERY_CACHE_SIZE: '0',
      EMBEDDINGS_MAX_PASSAGES: '4',
      EMBEDDINGS_CLAIM_LEASE_MS: '9000',
    });
    expect(s.embeddings).toEqual({
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: 'sk-emb-123456',
      model: 'nomic-embed-text',
      dimensions: 768,
      sendDimensions: true,
      encoding: 'base64',
      batchSize: 16,
      timeoutMs: 5000,
      maxRetries: 0,
      retryMaxWaitMs: 1000,
      queryCacheSize: 0,
      maxPassages: 4,
      claimLeaseMs: 9000,
    });
  });

  it.each([
    ['EMBEDDINGS_PROVIDER', 'cohere', 'one of none, openai'],
    ['EMBEDDINGS_BASE_URL', 'ftp://x', 'a URL of the form http://host[:port] or https://host[:port]'],
    ['EMBEDDINGS_DIMENSIONS', '0', 'an integer from 1 to 8192'],
    ['EMBEDDINGS_DIMENSIONS', '1.5', 'an integer from 1 to 8192'],
    ['EMBEDDINGS_ENCODING', 'f16', 'one of float, base64'],
    ['EMBEDDINGS_BATCH_SIZE', '4096', 'an integer from 1 to 2048'],
    ['EMBEDDINGS_TIMEOUT_MS', '50', 'an integer from 100 to 600000'],
    ['EMBEDDINGS_MAX_RETRIES', '-1', 'an integer from 0 to 10'],
    ['EMBEDDINGS_SEND_DIMENSIONS', 'maybe', 'true/false, 1/0, yes/no or on/off'],
    ['EMBEDDINGS_QUERY_CACHE_SIZE', 'many', 'an integer from 0 to 1000000'],
    ['EMBEDDINGS_MAX_PASSAGES', '0', 'an integer from 1 to 10000'],
  ])('stops startup on %s=%s naming the variable, the value and what is accepted', (name, value, accepted) => {
    const err = errorOf({ [name]: value });
    expect(err.code).toBe('ERR_SETTINGS_INVALID_VALUE');
    expect(err.issues.map((i) => i.variable)).toEqual([name]);
    expect(err.message).toContain(`${name}="${value}" is not valid: expected ${accepted}`);
  });

  it('refuses a batch whose answer would hold more numbers than the client accepts', () => {
    const err = errorOf({ EMBEDDINGS_BATCH_SIZE: '2048', EMBEDDINGS_DIMENSIONS: '1536' });
    expect(err.code).toBe('ERR_SETTINGS_CONFLICT');
    expect(err.message).toContain(
      'EMBEDDINGS_BATCH_SIZE=2048 × EMBEDDINGS_DIMENSIONS=1536 is more than 1048576 numbers in one answer; accepted: a batch of at most 682 texts',
    );
  });

  it('never echoes the key, and redacts it for logging', () => {
    const err = errorOf({ EMBEDDINGS_API_KEY: ' ', EMBEDDINGS_PROVIDER: 'x' });
    expect(err.issues.map((i) => i.variable)).toEqual(['EMBEDDINGS_PROVIDER']);
    const s = loadSettings({ EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_API_KEY: 'sk-emb-secret-42' });
    expect(JSON.stringify(redactSettings(s))).not.toContain('sk-emb-secret-42');
    expect(redactSettings(s).embeddings.apiKey).toBe('<hidden>');
    expect(JSON.stringify(serviceEnvironment(s))).not.toContain('sk-emb-secret-42');
  });

  it('defaults the endpoint to the chat provider’s URL and key, each apart', () => {
    const chat = { AI_BASE_URL: 'https://llm.example.com/v1', AI_API_KEY: 'sk-chat' };
    expect(embeddingsEndpoint(loadSettings(chat))).toEqual({
      baseUrl: 'https://llm.example.com/v1',
      apiKey: 'sk-chat',
    });
    expect(embeddingsEndpoint(loadSettings({ ...chat, EMBEDDINGS_API_KEY: 'sk-emb' }))).toEqual({
      baseUrl: 'https://llm.example.com/v1',
      apiKey: 'sk-emb',
    });
    expect(embeddingsEndpoint(loadSettings({ EMBEDDINGS_BASE_URL: 'http://127.0.0.1:8081/v1' }))).toEqual({
      baseUrl: 'http://127.0.0.1:8081/v1',
    });
  });

  it('refuses a claim lease shorter than one call with its retries, naming it, the value and the least accepted', () => {
    const err = errorOf({
      EMBEDDINGS_PROVIDER: 'openai',
      EMBEDDINGS_TIMEOUT_MS: '10000',
      EMBEDDINGS_MAX_RETRIES: '2',
      EMBEDDINGS_RETRY_MAX_WAIT_MS: '5000',
      EMBEDDINGS_CLAIM_LEASE_MS: '39999',
    });
    expect(err.code).toBe('ERR_SETTINGS_CONFLICT');
    expect(err.issues.map((i) => i.variable)).toEqual(['EMBEDDINGS_CLAIM_LEASE_MS']);
    expect(err.message).toContain('EMBEDDINGS_CLAIM_LEASE_MS=39999 is shorter than one embeddings call');
    expect(err.message).toContain('accepted: at least 40000');
    expect(
      loadSettings({
        EMBEDDINGS_PROVIDER: 'openai',
        EMBEDDINGS_TIMEOUT_MS: '10000',
        EMBEDDINGS_MAX_RETRIES: '2',
        EMBEDDINGS_RETRY_MAX_WAIT_MS: '5000',
        EMBEDDINGS_CLAIM_LEASE_MS: '40000',
      }).embeddings.claimLeaseMs,
    ).toBe(40000);
    // The defaults hold together (30 s × 4 + 30 s × 3 = 210 s ≤ 300 s), and with no provider there is no claim.
    expect(loadSettings({ EMBEDDINGS_PROVIDER: 'openai' }).embeddings.claimLeaseMs).toBe(300000);
    expect(loadSettings({ EMBEDDINGS_CLAIM_LEASE_MS: '1000' }).embeddings.claimLeaseMs).toBe(1000);
  });

  it('writes nothing to the service environment (the ConfigMap) while off but a changed vector length, and round-trips when on', () => {
    const off = serviceEnvironment(loadSettings({ EMBEDDINGS_MODEL: 'other' }));
    expect(Object.keys(off).filter((k) => k.startsWith('EMBEDDINGS_') || k.startsWith('SEARCH_SEMANTIC'))).toEqual([]);
    // Client-provided vectors need their length and ranking with no embedder too.
    const clientVectors = { EMBEDDINGS_MODEL: 'other', EMBEDDINGS_DIMENSIONS: '8', SEARCH_SEMANTIC_RATIO: '0.3' };
    const written = serviceEnvironment(loadSettings(clientVectors));
    expect(
      Object.entries(written).filter(([k]) => k.startsWith('EMBEDDINGS_') || k.startsWith('SEARCH_SEMANTIC')),
    ).toEqual([
      ['SEARCH_SEMANTIC_RATIO', '0.3'],
      ['EMBEDDINGS_DIMENSIONS', '8'],
    ]);
    expect(loadSettings(written).embeddings.dimensions).toBe(8);
    expect(loadSettings(written).search.semanticRatio).toBe(0.3);
    const s = loadSettings({ EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_DIMENSIONS: '384' });
    const on = serviceEnvironment(s);
    expect(Object.keys(on).filter((k) => k.startsWith('EMBEDDINGS_'))).toEqual([
      'EMBEDDINGS_PROVIDER',
      'EMBEDDINGS_MODEL',
      'EMBEDDINGS_DIMENSIONS',
      'EMBEDDINGS_SEND_DIMENSIONS',
      'EMBEDDINGS_ENCODING',
      'EMBEDDINGS_BATCH_SIZE',
      'EMBEDDINGS_TIMEOUT_MS',
      'EMBEDDINGS_MAX_RETRIES',
      'EMBEDDINGS_RETRY_MAX_WAIT_MS',
      'EMBEDDINGS_QUERY_CACHE_SIZE',
      'EMBEDDINGS_MAX_PASSAGES',
      'EMBEDDINGS_CLAIM_LEASE_MS',
    ]);
    expect(loadSettings(on).embeddings).toEqual(s.embeddings);
  });
});
