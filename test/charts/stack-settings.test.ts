import { SettingsError } from '../../configs';
import { IGNORED_AT_SYNTH, loadStackSettings, STACK_DATA_DIR, STACK_INDEX_DIR } from '../../charts';
import { SECRET_ENV } from './fixtures/secrets';

describe('loadStackSettings', () => {
  it('deploys production, a writable data dir and the stack’s kvstore, and trusts no proxy header without an Ingress', () => {
    const s = loadStackSettings({});
    expect(s.service.environment).toBe('production');
    expect(s.service.trustProxy).toBe(0);
    expect(loadStackSettings({ INGRESS_HOST: 'search.example.com' }).service.trustProxy).toBe(1);
    expect(loadStackSettings({ TRUST_PROXY: '2' }).service.trustProxy).toBe(2);
    expect(loadStackSettings({ INGRESS_HOST: 'search.example.com', TRUST_PROXY: '0' }).service.trustProxy).toBe(0);
    expect(s.service.dataDir).toBe(STACK_DATA_DIR);
    // The persisted search segment goes into the same writable emptyDir.
    expect(s.search.indexDir).toBe(STACK_INDEX_DIR);
    expect(STACK_INDEX_DIR.startsWith(`${STACK_DATA_DIR}/`)).toBe(true);
    expect(loadStackSettings({ INDEX_DIR: 'off' }).search.indexDir).toBe('off');
    expect(s.kvstore.url).toBe('redis://kvstore:6379');
    expect(s.rateLimit.effective.storeUrl).toBe('redis://kvstore:6379');
    expect(s.rateLimit.effective.multiplier).toBe(1);
  });

  it('acknowledges content on its Redis 7.2 append-only file (KVSTORE_DURABILITY=primary-disk) unless told otherwise; leaves an external Redis at the mode default', () => {
    expect(loadStackSettings({}).kvstore.durability).toBe('primary-disk');
    expect(loadStackSettings({ KVSTORE_DURABILITY: 'primary' }).kvstore.durability).toBe('primary');
    expect(loadStackSettings({ KVSTORE_DEPLOY: 'external', ...SECRET_ENV }).kvstore.durability).toBeUndefined();
  });

  it('lets any service variable override at synth time', () => {
    const s = loadStackSettings({
      RATE_LIMIT_SEARCH_REQUESTS: '120',
      ENVIRONMENT: 'staging',
      TRUST_PROXY: '2',
      LOG_LEVEL: 'debug',
    });
    expect(s.rateLimit.tiers.search.limit).toBe(120);
    expect(s.service.environment).toBe('staging');
    expect(s.service.trustProxy).toBe(2);
    expect(s.service.logLevel).toBe('debug');
  });

  it('ignores the shell’s NODE_ENV: a cluster is not the developer’s laptop', () => {
    expect(loadStackSettings({ NODE_ENV: 'development' }).service.environment).toBe('production');
  });

  it('never carries the service’s secrets, and keeps the alert router’s for their presence', () => {
    const s = loadStackSettings(SECRET_ENV);
    expect(s.service.apiToken).toBeUndefined();
    expect(s.ai.apiKey).toBeUndefined();
    expect(s.kvstore.password).toBeUndefined();
    expect(s.kvstore.url).toBe('redis://kvstore:6379');
    expect(s.rateLimit.storageUrl).toBeUndefined();
    expect(s.alerting.chatWebhookUrl).toBeDefined();
    expect(IGNORED_AT_SYNTH).toEqual([
      'NODE_ENV',
      'API_TOKEN',
      'KVSTORE_URL',
      'KVSTORE_PASSWORD',
      'KVSTORE_SENTINEL_PASSWORD',
      'RATELIMIT_STORAGE_URL',
      'RATELIMIT_STORAGE_SENTINEL_PASSWORD',
      'AI_API_KEY',
      'EMBEDDINGS_API_KEY',
    ]);
  });

  it('fails on a bad setting with a message naming it', () => {
    expect(() => loadStackSettings({ PROMETHEUS_SCRAPE_INTERVAL: 'often' })).toThrow(SettingsError);
    expect(() => loadStackSettings({ PROMETHEUS_SCRAPE_INTERVAL: 'often' })).toThrow(
      'PROMETHEUS_SCRAPE_INTERVAL="often" is not valid',
    );
    try {
      loadStackSettings({ BACKEND_REPLICAS: '0', SMTP_FROM: 'nobody' });
    } catch (e) {
      expect((e as SettingsError).issues.map((i) => i.variable)).toEqual(['SMTP_FROM', 'BACKEND_REPLICAS']);
      expect((e as SettingsError).code).toBe('ERR_SETTINGS_INVALID_VALUE');
    }
    expect(() => loadStackSettings({ HPA_ENABLED: 'true', BACKEND_REPLICAS: '5', HPA_MAX_REPLICAS: '3' })).toThrow(
      'HPA_MAX_REPLICAS=3 is below BACKEND_REPLICAS=5',
    );
  });
});
