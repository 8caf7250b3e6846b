import { backendSecretEnvironment, EXTERNAL_KVSTORE_URL, loadStackSettings, SECRETS } from '../../charts';
import { SettingsError, type Env, type KvstoreMode } from '../../configs';
import { referenceProblems, schemaProblems } from '../../tools/validate';
import { find, SECRET_ENV, SECRET_VALUES, synthStack, type Json } from './fixtures/stack';

/** An external Redis in each mode, addressed as a team would (the URL itself stays in the Secret). */
const EXTERNAL: Readonly<Record<KvstoreMode, Env>> = {
  standalone: { KVSTORE_DEPLOY: 'external' },
  cluster: {
    KVSTORE_DEPLOY: 'external',
    KVSTORE_MODE: 'cluster',
    KVSTORE_NODES: 'redis-1.example.com:6379,redis-2.example.com:6379',
  },
  sentinel: {
    KVSTORE_DEPLOY: 'external',
    KVSTORE_MODE: 'sentinel',
    KVSTORE_NODES: 'sentinel-1.example.com:26379,sentinel-2.example.com:26379',
    KVSTORE_SENTINEL_MASTER: 'search-master',
  },
};

const SENTINEL_SECRET = 'fixture-sentinel-pass-19ac3e';

function backendEnv(manifests: Json[]): Json[] {
  return find(manifests, 'Deployment', 'backend').spec.template.spec.containers[0].env;
}

describe('KVSTORE_DEPLOY=external: the backend uses an existing Redis, the stack deploys none', () => {
  describe.each(Object.keys(EXTERNAL) as KvstoreMode[])('KVSTORE_MODE=%s', (mode) => {
    const env: Env = { ...SECRET_ENV, KVSTORE_SENTINEL_PASSWORD: SENTINEL_SECRET, ...EXTERNAL[mode] };
    const stack = synthStack(env);
    const yaml = [...stack.files.values()].join('\n');

    it('generates no kvstore workload, Service, ConfigMap, NetworkPolicy or file', () => {
      expect([...stack.files.keys()]).toEqual([
        '0000-namespace.k8s.yaml',
        '0001-backend.k8s.yaml',
        '0002-alertmanager.k8s.yaml',
        '0003-prometheus.k8s.yaml',
        '0004-dashboard.k8s.yaml',
      ]);
      expect(stack.manifests.filter((m) => m.kind === 'StatefulSet')).toEqual([]);
      expect(stack.manifests.filter((m) => m.metadata.name.startsWith('kvstore'))).toEqual([]);
      expect(stack.manifests.filter((m) => m.metadata.labels?.['app.kubernetes.io/component'] === 'kvstore')).toEqual(
        [],
      );
      // The stack restricts no egress in any mode: the only NetworkPolicy is the in-cluster kvstore's ingress rule.
      expect(stack.manifests.filter((m) => m.kind === 'NetworkPolicy')).toEqual([]);
    });

    it('puts the mode and addresses into the backend ConfigMap, never a URL', () => {
      const data = find(stack.manifests, 'ConfigMap', 'backend-config').data;
      expect(data.KVSTORE_MODE).toBe(mode);
      expect(data.KVSTORE_NODES).toBe(EXTERNAL[mode].KVSTORE_NODES ?? '');
      expect(data.KVSTORE_SENTINEL_MASTER).toBe(EXTERNAL[mode].KVSTORE_SENTINEL_MASTER);
      expect(data).not.toHaveProperty('KVSTORE_URL');
      expect(data).not.toHaveProperty('KVSTORE_PASSWORD');
      expect(data).not.toHaveProperty('KVSTORE_SENTINEL_PASSWORD');
      expect(yaml).not.toContain(EXTERNAL_KVSTORE_URL);
      expect(yaml).not.toContain('redis://kvstore');
    });

    it('reads the URL (required) and the passwords (optional; the sentinels’ in sentinel mode only) from the Secret', () => {
      const refs = backendEnv(stack.manifests).filter((e: Json) => e.name.startsWith('KVSTORE_'));
      const expected = [
        {
          name: 'KVSTORE_URL',
          valueFrom: { secretKeyRef: { name: SECRETS.app.name, key: 'kvstore-url', optional: false } },
        },
        {
          name: 'KVSTORE_PASSWORD',
          valueFrom: { secretKeyRef: { name: SECRETS.app.name, key: 'kvstore-password', optional: true } },
        },
      ];
      if (mode === 'sentinel') {
        expected.push({
          name: 'KVSTORE_SENTINEL_PASSWORD',
          valueFrom: { secretKeyRef: { name: SECRETS.app.name, key: 'kvstore-sentinel-password', optional: true } },
        });
      }
      expect(refs).toEqual(expected);
      // No value is written but the heap limit (from the memory limit, not a secret).
      expect(backendEnv(stack.manifests).filter((e: Json) => e.value !== undefined)).toEqual([
        { name: 'NODE_OPTIONS', value: '--max-old-space-size=1536' },
      ]);
    });

    it('writes no secret value anywhere, and passes the schema and reference checks', () => {
      for (const v of [...SECRET_VALUES, SENTINEL_SECRET]) expect(yaml).not.toContain(v);
      expect(schemaProblems(stack.manifests)).toEqual([]);
      expect(referenceProblems(stack.manifests, undefined, { kvstoreDeploy: 'external' })).toEqual([]);
    });

    it('keeps the kvstore alerts, pointing at the external Redis', () => {
      const rules = find(stack.manifests, 'ConfigMap', 'prometheus-rules').data[
        'svc-ai-search-backend.rules.yml'
      ] as string;
      expect(rules).toContain('alert: KvstoreFallbackActive');
      expect(rules).toContain('alert: RateLimitsNotShared');
      expect(rules).toContain(`Check that the external Redis (KVSTORE_MODE=${mode})`);
      expect(rules).not.toContain('Check the kvstore pod');
    });
  });

  it('flags a kvstore object left in an external stack', () => {
    const inCluster = synthStack();
    const problems = referenceProblems(inCluster.manifests, undefined, { kvstoreDeploy: 'external' });
    expect(problems).toContain('StatefulSet/kvstore: KVSTORE_DEPLOY=external deploys no kvstore');
    expect(problems).toContain('ConfigMap/kvstore-config: KVSTORE_DEPLOY=external deploys no kvstore');
  });
});

describe('KVSTORE_DEPLOY settings', () => {
  it('defaults to the in-cluster Redis at redis://kvstore:6379, whose password is required', () => {
    const s = loadStackSettings({});
    expect(s.deploy.kvstoreDeploy).toBe('in-cluster');
    expect(s.kvstore.url).toBe('redis://kvstore:6379');
    expect(backendSecretEnvironment().map((r) => [r.variable, r.optional])).toEqual([
      ['API_TOKEN', false],
      ['AI_API_KEY', true],
      ['KVSTORE_PASSWORD', false],
    ]);
  });

  it('refuses an unknown value, naming the variable, the value and what is accepted', () => {
    expect(() => loadStackSettings({ KVSTORE_DEPLOY: 'managed' })).toThrow(
      'KVSTORE_DEPLOY="managed" is not valid: expected one of in-cluster, external',
    );
  });

  it.each(['cluster', 'sentinel'])(
    'refuses KVSTORE_MODE=%s with the in-cluster Redis, saying which setting to use',
    (mode) => {
      const env = {
        KVSTORE_MODE: mode,
        KVSTORE_NODES: 'redis-1.example.com:6379',
        ...(mode === 'sentinel' ? { KVSTORE_SENTINEL_MASTER: 'm' } : {}),
      };
      try {
        loadStackSettings(env);
        throw new Error('expected a SettingsError');
      } catch (e) {
        expect(e).toBeInstanceOf(SettingsError);
        expect((e as SettingsError).issues).toEqual([
          expect.objectContaining({ code: 'ERR_SETTINGS_CONFLICT', variable: 'KVSTORE_MODE', value: `"${mode}"` }),
        ]);
        expect((e as SettingsError).message).toContain(`KVSTORE_MODE="${mode}"`);
        expect((e as SettingsError).message).toContain(
          'KVSTORE_DEPLOY=in-cluster deploys one standalone Redis; accepted: KVSTORE_DEPLOY=external',
        );
      }
    },
  );

  it('external: a cluster or sentinel needs no URL at synth (it is in the Secret), and the topology rules still hold', () => {
    expect(loadStackSettings(EXTERNAL.cluster).kvstore.topology.mode).toBe('cluster');
    expect(loadStackSettings(EXTERNAL.sentinel).kvstore.topology.sentinelMaster).toBe('search-master');
    expect(() => loadStackSettings({ KVSTORE_DEPLOY: 'external', KVSTORE_MODE: 'sentinel' })).toThrow(
      'KVSTORE_MODE=sentinel needs KVSTORE_SENTINEL_MASTER',
    );
    expect(() => loadStackSettings({ KVSTORE_DEPLOY: 'external', KVSTORE_NODES: 'redis-1.example.com:6379' })).toThrow(
      'KVSTORE_NODES="redis-1.example.com:6379" is only used with KVSTORE_MODE=cluster',
    );
    // The synth never reads the real URL, even when the shell has it.
    expect(
      loadStackSettings({ ...EXTERNAL.cluster, KVSTORE_URL: 'rediss://:pw@redis.example.com:6380' }).kvstore.url,
    ).toBe(EXTERNAL_KVSTORE_URL);
  });
});
