import {
  SettingsError,
  VARIABLES,
  loadSettings,
  redactSettings,
  serviceEnvironment,
  settingsInputFromEnv,
} from '../../configs';

/** Runs loadSettings and returns the SettingsError it throws. */
function errorOf(env: Record<string, string>): SettingsError {
  try {
    loadSettings(env);
  } catch (e) {
    if (e instanceof SettingsError) return e;
    throw e;
  }
  throw new Error('expected loadSettings to throw');
}

describe('loadSettings: defaults', () => {
  it('with an empty environment gives the spec defaults in development (x5)', () => {
    const s = loadSettings({});
    expect(s.service.port).toBe(8080);
    expect(s.service.environment).toBe('development');
    expect(s.rateLimit.enabled).toBe(true);
    expect(s.rateLimit.tiers.search).toEqual({ limit: 60, windowSeconds: 60, burst: 15 });
    expect(s.rateLimit.effective.multiplier).toBe(5);
    expect(s.rateLimit.effective.tiers.search).toEqual({ limit: 300, windowSeconds: 60, burst: 75 });
    expect(s.rateLimit.alertThreshold).toBe(0.8);
    expect(s.rateLimit.logExceeded).toBe(true);
    expect(s.rateLimit.logWarnings).toBe(false);
    expect(s.rateLimit.logAll).toBe(false);
    expect(s.rateLimit.enableMetrics).toBe(true);
    expect(s.kvstore.url).toBeUndefined();
    expect(s.rateLimit.effective.storeUrl).toBeUndefined();
  });

  it('production applies RATE_LIMIT_PROD_MULTIPLIER (1.0): the spec table of §8.1', () => {
    const t = loadSettings({ ENVIRONMENT: 'production' }).rateLimit.effective.tiers;
    expect(t.global).toEqual({ limit: 1000, windowSeconds: 3600, burst: 100 });
    expect(t.ip).toEqual({ limit: 100, windowSeconds: 60, burst: 20 });
    expect(t.search).toEqual({ limit: 60, windowSeconds: 60, burst: 15 });
    expect(t.chat).toEqual({ limit: 30, windowSeconds: 60, burst: 10 });
    expect(t.upload).toEqual({ limit: 10, windowSeconds: 60, burst: 5 });
  });

  it.each([
    ['development', 5],
    ['testing', 5],
    ['staging', 1],
    ['production', 1],
  ])('ENVIRONMENT=%s uses multiplier %d', (env, m) => {
    expect(loadSettings({ ENVIRONMENT: env }).rateLimit.effective.multiplier).toBe(m);
  });

  it('multipliers round down and never go below 1', () => {
    const s = loadSettings({
      ENVIRONMENT: 'production',
      RATE_LIMIT_PROD_MULTIPLIER: '0.01',
      RATE_LIMIT_SEARCH_REQUESTS: '150',
    });
    expect(s.rateLimit.effective.tiers.search).toEqual({ limit: 1, windowSeconds: 60, burst: 1 });
    const d = loadSettings({ ENVIRONMENT: 'development', RATE_LIMIT_DEV_MULTIPLIER: '2.5' });
    expect(d.rateLimit.effective.tiers.upload).toEqual({ limit: 25, windowSeconds: 60, burst: 12 });
  });

  it('falls back to NODE_ENV when ENVIRONMENT is unset', () => {
    expect(loadSettings({ NODE_ENV: 'production' }).service.environment).toBe('production');
    expect(loadSettings({ NODE_ENV: 'test' }).service.environment).toBe('testing');
    expect(loadSettings({ NODE_ENV: 'whatever' }).service.environment).toBe('development');
    expect(loadSettings({ NODE_ENV: 'production', ENVIRONMENT: 'staging' }).service.environment).toBe('staging');
  });

  it('RATELIMIT_STORAGE_URL wins over KVSTORE_URL for the limiter store', () => {
    expect(loadSettings({ KVSTORE_URL: 'redis://a:6379' }).rateLimit.effective.storeUrl).toBe('redis://a:6379');
    expect(
      loadSettings({ KVSTORE_URL: 'redis://a:6379', RATELIMIT_STORAGE_URL: 'rediss://:pw@b:6380/2' }).rateLimit
        .effective.storeUrl,
    ).toBe('rediss://:pw@b:6380/2');
  });

  it('empty strings count as unset', () => {
    expect(loadSettings({ PORT: '', API_TOKEN: '  ' }).service.port).toBe(8080);
    expect(loadSettings({ API_TOKEN: '' }).service.apiToken).toBeUndefined();
  });
});

describe('loadSettings: every variable parses', () => {
  // One good raw value per variable, so a variable added without a test fails here.
  const GOOD: Record<string, string> = {
    PORT: '9000',
    ENVIRONMENT: 'staging',
    LOG_LEVEL: 'debug',
    API_TOKEN: 't0k3n',
    DATA_DIR: '/var/lib/svc',
    TRUST_PROXY: '10.0.0.0/8,loopback',
    MAX_BODY_SIZE: '5mb',
    SHUTDOWN_TIMEOUT_SECONDS: '3',
    REQUEST_TIMEOUT_MS: '20000',
    HEADERS_TIMEOUT_MS: '5000',
    KEEP_ALIVE_TIMEOUT_MS: '61000',
    DEMO_CONTENT: 'false',
    SEARCH_PAGE: 'true',
    KVSTORE_URL: 'redis://:pw@kv:6379/1',
    KVSTORE_PASSWORD: 'pw',
    KVSTORE_COMMAND_TIMEOUT_MS: '100',
    KVSTORE_CONNECT_TIMEOUT_MS: '500',
    KVSTORE_MODE: 'sentinel',
    KVSTORE_NODES: 'kv-s2:26379,[::1]:26380',
    KVSTORE_SENTINEL_MASTER: 'mymaster',
    KVSTORE_SENTINEL_PASSWORD: 'spw',
    RATELIMIT_STORAGE_MODE: 'Sentinel',
    RATELIMIT_STORAGE_NODES: 'rl-s2:26379',
    RATELIMIT_STORAGE_SENTINEL_MASTER: 'rl.master',
    RATELIMIT_STORAGE_SENTINEL_PASSWORD: 'rspw',
    RATELIMIT_ENABLED: 'no',
    RATELIMIT_STORAGE_URL: 'rediss://rl:6380',
    RATE_LIMIT_DEV_MULTIPLIER: '2',
    RATE_LIMIT_PROD_MULTIPLIER: '1.5',
    RATE_LIMIT_LOG_EXCEEDED: '0',
    RATE_LIMIT_LOG_WARNINGS: 'yes',
    RATE_LIMIT_LOG_ALL: 'TRUE',
    RATE_LIMIT_ALERT_THRESHOLD: '0.5',
    RATE_LIMIT_IP_GLOBAL_SHARE: '1',
    RATE_LIMIT_ENABLE_METRICS: 'false',
    RATE_LIMIT_IPV6_PREFIX: '56',
    RATE_LIMIT_MEMORY_MAX_KEYS: '5000',
    SEARCH_CACHE_SIZE: '50',
    SEARCH_CACHE_TTL_SECONDS: '0',
    SEARCH_QUERY_EXPANSION: 'off',
    SEARCH_EXPANSION_DOCS: '5',
    SEARCH_EXPANSION_TERMS: '30',
    SEARCH_BM25_K1: '1.2',
    SEARCH_BM25_B: '0.75',
    SEARCH_BM25_DELTA: '0',
    SEARCH_PROXIMITY_WEIGHT: '1.5',
    SEARCH_PROXIMITY_WINDOW: '8',
    INDEX_DIR: '/var/lib/x/index',
    SEARCH_SYNONYMS_FILE: '/etc/svc-ai-search/synonyms.txt',
    SEARCH_HYBRID_FUSION: 'rrf',
    SEARCH_SEMANTIC_RATIO: '0.3',
    SEARCH_SEMANTIC_CANDIDATES: '250',
    SEARCH_SEMANTIC_EF: '200',
    CONTENT_COMPACTION_BYTES: '1mb',
    KVSTORE_KEY_PREFIX: 'blog:{content}',
    KVSTORE_DURABILITY: 'replica-disk',
    KVSTORE_ACCEPT_EVICTION: 'yes',
    KVSTORE_EVICTION_CHECK_MS: '2000',
    AI_PROVIDER: 'openai',
    AI_BASE_URL: 'http://127.0.0.1:1234/v1',
    AI_API_KEY: 'sk-x',
    AI_MODEL: 'm',
    AI_TIMEOUT_MS: '1000',
    AI_MAX_RETRIES: '0',
    AI_MAX_TOKENS: '64',
    AI_FIRST_BYTE_TIMEOUT_MS: '5000',
    AI_ANSWER_TIMEOUT_MS: '60000',
    AI_ANSWER_MAX_CHARS: '4096',
    AI_EVENT_MAX_BYTES: '2mb',
    AI_TEMPERATURE: '0',
    CHAT_CONTEXT_DOCUMENTS: '3',
    EMBEDDINGS_PROVIDER: 'openai',
    EMBEDDINGS_BASE_URL: 'http://127.0.0.1:1235/v1',
    EMBEDDINGS_API_KEY: 'sk-e',
    EMBEDDINGS_MODEL: 'e',
    EMBEDDINGS_DIMENSIONS: '384',
    EMBEDDINGS_SEND_DIMENSIONS: 'true',
    EMBEDDINGS_ENCODING: 'base64',
    EMBEDDINGS_BATCH_SIZE: '8',
    EMBEDDINGS_TIMEOUT_MS: '2000',
    EMBEDDINGS_MAX_RETRIES: '1',
    EMBEDDINGS_RETRY_MAX_WAIT_MS: '500',
    EMBEDDINGS_QUERY_CACHE_SIZE: '10',
    EMBEDDINGS_MAX_PASSAGES: '2',
    EMBEDDINGS_CLAIM_LEASE_MS: '60000',
    CHAT_WEBHOOK_URL: 'https://chat.example.com/hook',
    SMTP_HOST: 'mail.example.com',
    SMTP_PORT: '25',
    SMTP_USER: 'u',
    SMTP_PASSWORD: 'p',
    SMTP_FROM: 'am@example.com',
    WEBHOOK_URL: 'https://hooks.example.com/x',
    WEBHOOK_BEARER_TOKEN: 'b',
    INCIDENT_SERVICE_KEY: 'k',
    ALERT_GROUP_BY: 'alertname,service',
    ALERT_GROUP_WAIT: '10s',
    ALERT_GROUP_INTERVAL: '1m',
    ALERT_REPEAT_INTERVAL: '2h',
    NAMESPACE: 'search',
    CREATE_NAMESPACE: 'false',
    NAME_PREFIX: 'team-a-',
    STORAGE_CLASS: 'fast-ssd',
    IMAGE_PULL_SECRETS: 'regcred,other',
    INGRESS_HOST: 'search.example.com',
    INGRESS_TLS_SECRET: 'search-tls',
    INGRESS_CLASS: 'nginx',
    BACKEND_IMAGE: 'registry.local/svc:1.2.3',
    BACKEND_REPLICAS: '3',
    BACKEND_MEMORY_LIMIT: '4Gi',
    BACKEND_MEMORY_REQUEST: '3Gi',
    HPA_ENABLED: 'on',
    HPA_MAX_REPLICAS: '6',
    HPA_CPU_PERCENT: '60',
    KVSTORE_DEPLOY: 'External',
    KVSTORE_IMAGE: 'redis:7',
    KVSTORE_STORAGE: '2Gi',
    PROMETHEUS_IMAGE: 'prom/prometheus:v2',
    PROMETHEUS_STORAGE: '20Gi',
    PROMETHEUS_SCRAPE_INTERVAL: '30s',
    PROMETHEUS_EVALUATION_INTERVAL: '30s',
    ALERTMANAGER_IMAGE: 'prom/alertmanager:v0.25.0',
    PROMETHEUS_RETENTION: '30d',
    MONITORING_MODE: 'Operator',
    PROMETHEUS_RULE_LABELS: 'release=kube-prometheus-stack, example.com/team=search',
    ALERT_INHIBIT_EQUAL: 'alertname,service',
    RUNBOOK_BASE_URL: 'https://runbooks.example.com/search',
    HEARTBEAT_URL: 'https://heartbeat.example.com/ping',
    HEARTBEAT_INTERVAL: '1m',
    ALERT_MIN_REQUESTS_PER_HOUR: '200',
    ALERT_NO_TRAFFIC_ENABLED: 'on',
    ALERT_NO_TRAFFIC_MIN_REQUESTS: '5',
  };
  for (const v of VARIABLES) {
    if (GOOD[v.name] !== undefined) continue;
    if (/^CHAT_CHANNEL_/.test(v.name)) GOOD[v.name] = '#c-' + v.name.toLowerCase();
    else if (/^EMAIL_/.test(v.name)) GOOD[v.name] = v.name.toLowerCase() + '@example.org';
    else if (/^RATE_LIMIT_\w+_(REQUESTS|BURST)$/.test(v.name)) GOOD[v.name] = '7';
    else if (/^RATE_LIMIT_\w+_WINDOW$/.test(v.name)) GOOD[v.name] = '30';
    else if (/^RATE_LIMIT_\w+_PATHS$/.test(v.name)) GOOD[v.name] = '/x/' + v.name.split('_')[2].toLowerCase();
    else if (/^RATE_LIMIT_\w+_METHODS$/.test(v.name)) GOOD[v.name] = 'get,post';
    else if (/_FOR$/.test(v.name)) GOOD[v.name] = '3m';
    else if (/^ALERT_|^SLO_/.test(v.name)) GOOD[v.name] = '0.5';
  }

  it('has a sample value for every variable in the table', () => {
    expect(VARIABLES.filter((v) => GOOD[v.name] === undefined).map((v) => v.name)).toEqual([]);
  });

  it('loads all of them together', () => {
    const s = loadSettings(GOOD);
    expect(s.service).toMatchObject({
      port: 9000,
      environment: 'staging',
      logLevel: 'debug',
      maxBodyBytes: 5 * 1024 * 1024,
    });
    expect(s.service.trustProxy).toEqual(['10.0.0.0/8', 'loopback']);
    expect(s.rateLimit.enabled).toBe(false);
    expect(s.rateLimit.logAll).toBe(true);
    expect(s.rateLimit.mapping.chat).toEqual({ paths: ['/x/chat'], methods: ['GET', 'POST'] });
    expect(s.rateLimit.effective.multiplier).toBe(1.5);
    expect(s.rateLimit.effective.tiers.ip).toEqual({ limit: 10, windowSeconds: 30, burst: 10 });
    expect(s.ai).toMatchObject({ provider: 'openai', maxRetries: 0, temperature: 0 });
    expect(s.ai).toMatchObject({
      firstByteTimeoutMs: 5000,
      answerTimeoutMs: 60000,
      answerMaxChars: 4096,
      eventMaxBytes: 2 * 1024 * 1024,
    });
    expect(s.alerting.groupBy).toEqual(['alertname', 'service']);
    expect(s.deploy).toMatchObject({ scrapeInterval: '30s', hpaEnabled: true, backendReplicas: 3 });
    expect(s.search).toEqual({
      cacheMaxSize: 50,
      cacheTtlSeconds: 0,
      queryExpansion: false,
      expansionDocs: 5,
      expansionTerms: 30,
      bm25K1: 1.2,
      bm25B: 0.75,
      bm25Delta: 0,
      proximityWeight: 1.5,
      proximityWindow: 8,
      indexDir: '/var/lib/x/index',
      synonymsFile: '/etc/svc-ai-search/synonyms.txt',
      hybridFusion: 'rrf',
      semanticRatio: 0.3,
      semanticCandidates: 250,
      semanticEf: 200,
    });
    expect(s.content).toEqual({ compactionBytes: 1024 * 1024 });
    expect(s.kvstore.keyPrefix).toBe('blog:{content}');
    expect(s.kvstore.topology).toEqual({
      mode: 'sentinel',
      nodes: ['kv-s2:26379', '[::1]:26380'],
      sentinelMaster: 'mymaster',
      sentinelPassword: 'spw',
    });
    expect(s.rateLimit.storageTopology).toMatchObject({
      mode: 'sentinel',
      nodes: ['rl-s2:26379'],
      sentinelMaster: 'rl.master',
    });
  });

  it.each(VARIABLES.map((v) => [v.name, v.path]))('%s lands at %s', (name, path) => {
    const input = settingsInputFromEnv({ [name]: GOOD[name] }) as Record<string, unknown>;
    const value = path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], input);
    expect(value).toBeDefined();
  });
});

describe('loadSettings: bad values stop startup with one clear message', () => {
  it.each([
    ['RATE_LIMIT_IP_REQUESTS', 'abc', 'an integer'],
    ['RATE_LIMIT_IP_REQUESTS', '1.5', 'an integer'],
    ['RATE_LIMIT_SEARCH_WINDOW', '-60', 'an integer from 1'],
    ['RATE_LIMIT_CHAT_BURST', '0', 'an integer from 1'],
    ['ENVIRONMENT', 'prod-eu', 'one of development, testing, staging, production'],
    ['RATE_LIMIT_DEV_MULTIPLIER', '0', 'a number > 0'],
    ['RATE_LIMIT_PROD_MULTIPLIER', '-1', 'a number > 0'],
    ['RATE_LIMIT_ALERT_THRESHOLD', '1.5', '<= 1'],
    ['RATE_LIMIT_IP_GLOBAL_SHARE', '0', 'a number > 0'],
    ['RATE_LIMIT_IP_GLOBAL_SHARE', '1.5', '<= 1'],
    ['RATE_LIMIT_IP_GLOBAL_SHARE', 'half', 'a number'],
    ['RATELIMIT_ENABLED', 'maybe', 'true/false'],
    ['PORT', '70000', 'an integer from 1 to 65535'],
    ['LOG_LEVEL', 'loud', 'one of fatal'],
    ['AI_BASE_URL', 'not a url', 'a URL'],
    ['AI_BASE_URL', 'ftp://x/v1', 'a URL'],
    ['RATE_LIMIT_SEARCH_PATHS', 'api/search', 'a path starting with /'],
    ['RATE_LIMIT_SEARCH_METHODS', 'FETCH', 'an HTTP method'],
    ['TRUST_PROXY', 'true', 'a hop count'],
    ['TRUST_PROXY', '10.0.0.0/99', 'a hop count'],
    ['MAX_BODY_SIZE', 'ten megs', 'a size'],
    ['PROMETHEUS_SCRAPE_INTERVAL', '15', 'a duration'],
    ['EMAIL_CRITICAL', 'nobody', 'an e-mail address'],
    ['NAMESPACE', 'Bad_Name', 'a DNS label'],
    ['SEARCH_QUERY_EXPANSION', 'sometimes', 'true/false'],
    ['SEARCH_EXPANSION_DOCS', '0', 'an integer from 1 to 100'],
    ['SEARCH_EXPANSION_TERMS', '500', 'an integer from 1 to 200'],
    ['SEARCH_BM25_K1', '-0.1', 'a number >= 0'],
    ['SEARCH_BM25_B', '1.5', '<= 1'],
    ['SEARCH_BM25_DELTA', '11', 'a number >= 0 and <= 10'],
    ['SEARCH_PROXIMITY_WEIGHT', '-1', 'a number >= 0 and <= 16'],
    ['SEARCH_PROXIMITY_WEIGHT', 'strong', 'a number >= 0 and <= 16'],
    ['SEARCH_PROXIMITY_WINDOW', '1', 'an integer from 2 to 64'],
    ['SEARCH_PROXIMITY_WINDOW', '4.5', 'an integer from 2 to 64'],
    ['INDEX_DIR', 'a\nb', 'a folder path (no control characters), or off'],
    ['SEARCH_SYNONYMS_FILE', 'a\nb', 'a file path (no control characters)'],
    ['SEARCH_HYBRID_FUSION', 'rank', 'one of rrf, normalized'],
    ['SEARCH_SEMANTIC_RATIO', '1.5', 'a number >= 0 and <= 1'],
    ['SEARCH_SEMANTIC_CANDIDATES', '0', 'an integer from 1 to 10000'],
    ['SEARCH_SEMANTIC_EF', '8', 'an integer from 16 to 4096'],
    ['AI_ANSWER_MAX_CHARS', '0', 'an integer from 1'],
    ['AI_ANSWER_TIMEOUT_MS', '50', 'an integer from 100'],
    ['AI_FIRST_BYTE_TIMEOUT_MS', 'soon', 'an integer from 100'],
    ['AI_EVENT_MAX_BYTES', '100', 'a size'],
    ['CONTENT_COMPACTION_BYTES', '100', 'from 1024 bytes'],
    ['KVSTORE_KEY_PREFIX', 'has space', 'letters, digits'],
    ['KVSTORE_KEY_PREFIX', 'content:', 'not starting or ending with :'],
    ['KVSTORE_KEY_PREFIX', 'ratelimit:content', "outside the rate limiter's ratelimit: keys"],
    ['KVSTORE_KEY_PREFIX', 'ratelimit', "outside the rate limiter's ratelimit: keys"],
    ['KVSTORE_DURABILITY', 'disk', 'one of primary, primary-disk, replica, replica-disk'],
    ['KVSTORE_DURABILITY', 'WAIT', 'one of primary, primary-disk, replica, replica-disk'],
  ])('%s=%s', (name, value, accepted) => {
    const err = errorOf({ [name]: value });
    expect(err.code).toBe('ERR_SETTINGS_INVALID_VALUE');
    expect(err.issues).toHaveLength(1);
    expect(err.message).toContain(name);
    expect(err.message).toContain(JSON.stringify(value));
    expect(err.message).toContain(accepted);
  });

  it('a malformed KVSTORE_URL is named, with any password masked', () => {
    const err = errorOf({ KVSTORE_URL: 'http://:supersecret@kv:6379' });
    expect(err.message).toContain('KVSTORE_URL');
    expect(err.message).toContain('redis://');
    expect(err.message).not.toContain('supersecret');
    expect(errorOf({ KVSTORE_URL: 'not a url' }).message).toContain('<hidden>');
  });

  it('never echoes a secret value', () => {
    const err = errorOf({ SMTP_PORT: 'x', RATE_LIMIT_IP_BURST: 'y', CHAT_WEBHOOK_URL: 'hooks-secret-value' });
    expect(err.issues).toHaveLength(3);
    expect(err.message).not.toContain('hooks-secret-value');
    expect(err.message).toContain('CHAT_WEBHOOK_URL=<hidden>');
  });

  it('reports every bad variable at once', () => {
    const err = errorOf({ PORT: 'x', RATE_LIMIT_IP_WINDOW: '0', ENVIRONMENT: 'nope' });
    expect(err.issues.map((i) => i.variable).sort()).toEqual(['ENVIRONMENT', 'PORT', 'RATE_LIMIT_IP_WINDOW']);
  });

  it('a path prefix given to two tiers is a conflict naming both variables', () => {
    const err = errorOf({ RATE_LIMIT_CHAT_PATHS: '/api/chat,/api/search', RATE_LIMIT_CHAT_METHODS: 'GET' });
    expect(err.code).toBe('ERR_SETTINGS_CONFLICT');
    expect(err.message).toContain('RATE_LIMIT_SEARCH_PATHS');
    expect(err.message).toContain('RATE_LIMIT_CHAT_PATHS');
  });

  it('an answer limit below the tokens asked for is a conflict naming both variables', () => {
    const err = errorOf({ AI_MAX_TOKENS: '4000', AI_ANSWER_MAX_CHARS: '1000' });
    expect(err.code).toBe('ERR_SETTINGS_CONFLICT');
    expect(err.issues).toEqual([expect.objectContaining({ variable: 'AI_ANSWER_MAX_CHARS', value: '1000' })]);
    expect(err.message).toContain('AI_MAX_TOKENS=4000');
  });

  it.each([
    ['1', true],
    ['0', false],
    ['yes', true],
    ['no', false],
    ['true', true],
    ['FALSE', false],
    ['On', true],
    ['off', false],
  ])('boolean %s → %s', (raw, value) => {
    expect(loadSettings({ RATE_LIMIT_LOG_ALL: raw as string }).rateLimit.logAll).toBe(value);
  });

  it.each([
    ['0', 0],
    ['false', 0],
    ['1', 1],
    ['2', 2],
    ['10.0.0.0/8', ['10.0.0.0/8']],
    ['::1, fd00::/8', ['::1', 'fd00::/8']],
  ])('TRUST_PROXY=%s → %j', (raw, value) => {
    expect(loadSettings({ TRUST_PROXY: raw as string }).service.trustProxy).toEqual(value);
  });
});

describe('serviceEnvironment and redactSettings', () => {
  it('round-trips: the ConfigMap environment reproduces the settings', () => {
    const s = loadSettings({ ENVIRONMENT: 'production', RATE_LIMIT_SEARCH_REQUESTS: '120', TRUST_PROXY: '1' });
    const env = serviceEnvironment(s);
    expect(env.RATE_LIMIT_SEARCH_REQUESTS).toBe('120');
    expect(env.RATE_LIMIT_SEARCH_PATHS).toBe(
      '/api/search,/api/eval,/api/v1/articles,/api/v1/projects,/api/v1/experiences',
    );
    expect(loadSettings(env).rateLimit).toEqual(s.rateLimit);
    expect(loadSettings(env).service).toEqual(s.service);
  });

  it('leaves secrets and synth-only settings out', () => {
    const s = loadSettings({ API_TOKEN: 'tok-123', AI_API_KEY: 'sk-456', KVSTORE_URL: 'redis://:pw-789@kv:6379' });
    const env = serviceEnvironment(s);
    const text = JSON.stringify(env);
    for (const secret of ['tok-123', 'sk-456', 'pw-789']) expect(text).not.toContain(secret);
    expect(env.SMTP_HOST).toBeUndefined();
    expect(env.NAMESPACE).toBeUndefined();
  });

  it('redacts every secret for logging', () => {
    const s = loadSettings({
      API_TOKEN: 'tok-123',
      AI_API_KEY: 'sk-456',
      SMTP_PASSWORD: 'smtp-789',
      KVSTORE_URL: 'redis://:kv-000@kv:6379',
    });
    const text = JSON.stringify(redactSettings(s));
    for (const secret of ['tok-123', 'sk-456', 'smtp-789', 'kv-000']) expect(text).not.toContain(secret);
    expect(redactSettings(s).service.apiToken).toBe('<hidden>');
  });
});
