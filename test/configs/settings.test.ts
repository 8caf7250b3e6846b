import {
  DEFAULT_SETTINGS,
  RATE_LIMIT_KEY_NAMESPACE,
  SettingsError,
  VARIABLES,
  getPath,
  parseSettings,
} from '../../configs';
import { KEY_PREFIX } from '../../service/ratelimit';

describe('parseSettings', () => {
  it('with no input equals the defaults plus derived fields', () => {
    const s = parseSettings();
    expect(s.service).toEqual(DEFAULT_SETTINGS.service);
    expect(s.rateLimit.tiers).toEqual(DEFAULT_SETTINGS.rateLimit.tiers);
    expect(s.rateLimit.effective.multiplier).toBe(5);
  });

  it('undefined never overrides a default', () => {
    const s = parseSettings({
      service: { port: undefined, environment: 'production' },
      rateLimit: { tiers: { ip: { limit: undefined } } },
    });
    expect(s.service.port).toBe(8080);
    expect(s.rateLimit.tiers.ip.limit).toBe(100);
    expect(s.rateLimit.tiers.ip.burst).toBe(20);
  });

  it('deep-merges nested input and replaces arrays whole', () => {
    const s = parseSettings({ rateLimit: { mapping: { chat: { paths: ['/api/ask'] } } } });
    expect(s.rateLimit.mapping.chat).toEqual({ paths: ['/api/ask'], methods: ['POST'] });
  });

  it('checks typed input with the same rules as the environment', () => {
    expect(() => parseSettings({ rateLimit: { devMultiplier: 0 } })).toThrow(
      /RATE_LIMIT_DEV_MULTIPLIER=0 is not valid/,
    );
    expect(() => parseSettings({ service: { port: 1.5 } })).toThrow(/PORT=1.5/);
  });

  it('rejects unknown keys with ERR_SETTINGS_UNKNOWN_KEY', () => {
    try {
      parseSettings({ service: { prot: 1 } } as never);
      throw new Error('no throw');
    } catch (e) {
      expect(e).toBeInstanceOf(SettingsError);
      expect((e as SettingsError).code).toBe('ERR_SETTINGS_UNKNOWN_KEY');
      expect((e as SettingsError).message).toContain('service.prot');
    }
  });

  it('HPA maximum below the replica count is a conflict', () => {
    expect(() => parseSettings({ deploy: { backendMemoryLimit: '768Mi' } })).toThrow(
      /BACKEND_MEMORY_REQUEST=2Gi is above BACKEND_MEMORY_LIMIT=768Mi/,
    );
    expect(() => parseSettings({ deploy: { backendMemoryLimit: '500Mi', backendMemoryRequest: '256Mi' } })).toThrow(
      /BACKEND_MEMORY_LIMIT=500Mi is too small for the heap it sets: --max-old-space-size would be 250 MiB/,
    );
    expect(
      parseSettings({ deploy: { backendMemoryLimit: '1Gi', backendMemoryRequest: '1Gi' } }).deploy.backendMemoryLimit,
    ).toBe('1Gi');
    expect(() => parseSettings({ deploy: { hpaEnabled: true, backendReplicas: 5, hpaMaxReplicas: 2 } })).toThrow(
      /HPA_MAX_REPLICAS=2 is below BACKEND_REPLICAS=5/,
    );
  });

  it('every variable points at a field that exists in the defaults', () => {
    for (const v of VARIABLES) {
      const parent = v.path.split('.').slice(0, -1).join('.');
      const leaf = v.path.split('.').pop()!;
      expect(Object.keys(getPath(DEFAULT_SETTINGS, parent) as object)).toContain(leaf);
    }
  });

  it('variable names are unique and upper snake case', () => {
    const names = VARIABLES.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^[A-Z][A-Z0-9_]*$/);
  });

  it('every default passes its own check', () => {
    expect(() => parseSettings({})).not.toThrow();
  });

  it("the content key prefix check guards the rate limiter's real key namespace", () => {
    expect(KEY_PREFIX).toBe(`${RATE_LIMIT_KEY_NAMESPACE}:`);
    expect(() => parseSettings({ kvstore: { keyPrefix: `${KEY_PREFIX}content` } })).toThrow(SettingsError);
    expect(parseSettings({ kvstore: { keyPrefix: 'ratelimits-are-elsewhere' } }).kvstore.keyPrefix).toBe(
      'ratelimits-are-elsewhere',
    );
  });
});
