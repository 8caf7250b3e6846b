import {
  checkExternalKvstore,
  parseSecretsFile,
  readersOf,
  REQUIRED_SECRET_VARIABLES,
  secretManifests,
} from '../../tools/apply-secrets';
import { backendSecretEnvironment, stackNames } from '../../charts';
import { SettingsError } from '../../configs';

describe('make secrets (tools/apply-secrets.ts)', () => {
  const names = stackNames('team-a-');

  it('builds the app Secret under the stack’s name, and the Alertmanager one only when a destination secret is set', () => {
    const only = secretManifests({ API_TOKEN: 't0k', KVSTORE_PASSWORD: 'pw' }, names, 'ns');
    expect(only).toEqual([
      expect.objectContaining({
        kind: 'Secret',
        metadata: expect.objectContaining({ name: 'team-a-svc-ai-search-secrets', namespace: 'ns' }),
        stringData: { 'api-token': 't0k', 'kvstore-password': 'pw' },
      }),
    ]);
    const all = secretManifests(
      { API_TOKEN: 't', KVSTORE_PASSWORD: 'p', AI_API_KEY: 'k', SMTP_PASSWORD: 's', CHAT_WEBHOOK_URL: 'https://x' },
      names,
      'ns',
    );
    expect(all.map((m) => [m.metadata.name, Object.keys(m.stringData).sort()])).toEqual([
      ['team-a-svc-ai-search-secrets', ['ai-api-key', 'api-token', 'kvstore-password']],
      ['team-a-alertmanager-secrets', ['chat-webhook-url', 'smtp-password']],
    ]);
  });

  it('puts the embeddings key in the app Secret only when the backend references it (an embedder configured)', () => {
    const values = { API_TOKEN: 't', KVSTORE_PASSWORD: 'p', EMBEDDINGS_API_KEY: 'sk-emb' };
    expect(Object.keys(secretManifests(values, names, 'ns')[0].stringData).sort()).toEqual([
      'api-token',
      'kvstore-password',
    ]);
    const refs = backendSecretEnvironment({ embeddings: true });
    expect(secretManifests(values, names, 'ns', refs)[0].stringData).toEqual({
      'api-token': 't',
      'kvstore-password': 'p',
      'embeddings-api-key': 'sk-emb',
    });
  });

  it('refuses to run without what production needs, naming the variables and no value', () => {
    expect(REQUIRED_SECRET_VARIABLES).toEqual(['API_TOKEN', 'KVSTORE_PASSWORD']);
    expect(() => secretManifests({ AI_API_KEY: 'sk-secret' }, names, 'ns')).toThrow(
      /missing API_TOKEN, KVSTORE_PASSWORD/,
    );
    try {
      secretManifests({ AI_API_KEY: 'sk-secret' }, names, 'ns');
    } catch (e) {
      expect((e as Error).message).not.toContain('sk-secret');
    }
  });

  it('reads KEY=VALUE files with comments, export and quotes', () => {
    expect(parseSecretsFile('# comment\nexport API_TOKEN="a b"\nKVSTORE_PASSWORD=\'p=q\'\n\nnot a line\n')).toEqual({
      API_TOKEN: 'a b',
      KVSTORE_PASSWORD: 'p=q',
    });
  });

  it('restarts exactly the workloads that read a changed Secret', () => {
    expect(readersOf(names)).toEqual({
      'team-a-svc-ai-search-secrets': ['deployment/team-a-backend', 'statefulset/team-a-kvstore'],
      'team-a-alertmanager-secrets': ['deployment/team-a-alertmanager'],
    });
  });

  describe('KVSTORE_DEPLOY=external', () => {
    const sentinel = backendSecretEnvironment({ kvstoreDeploy: 'external', kvstoreMode: 'sentinel' });

    it('requires the URL instead of a password, and writes the keys the backend references', () => {
      expect(() => secretManifests({ API_TOKEN: 't', KVSTORE_PASSWORD: 'p' }, names, 'ns', sentinel)).toThrow(
        /missing KVSTORE_URL/,
      );
      const [app] = secretManifests(
        {
          API_TOKEN: 't',
          KVSTORE_URL: 'rediss://:u@redis.example.com:26380',
          KVSTORE_SENTINEL_PASSWORD: 's',
          RATELIMIT_STORAGE_URL: 'redis://x:1',
        },
        names,
        'ns',
        sentinel,
      );
      expect(app.stringData).toEqual({
        'api-token': 't',
        'kvstore-url': 'rediss://:u@redis.example.com:26380',
        'kvstore-sentinel-password': 's',
      });
      // Outside sentinel mode the service refuses KVSTORE_SENTINEL_PASSWORD, so the Secret does not carry it.
      const [cluster] = secretManifests(
        { API_TOKEN: 't', KVSTORE_URL: 'redis://r:6379', KVSTORE_SENTINEL_PASSWORD: 's' },
        names,
        'ns',
        backendSecretEnvironment({ kvstoreDeploy: 'external', kvstoreMode: 'cluster' }),
      );
      expect(Object.keys(cluster.stringData).sort()).toEqual(['api-token', 'kvstore-url']);
    });

    it('checks the real URL against the mode before it reaches the Secret, masking its password', () => {
      const env = { KVSTORE_DEPLOY: 'external', KVSTORE_MODE: 'cluster' };
      expect(checkExternalKvstore(env, { KVSTORE_URL: 'rediss://:pw@redis.example.com:6380' }).kvstore.url).toBe(
        'rediss://:pw@redis.example.com:6380',
      );
      try {
        checkExternalKvstore(env, { KVSTORE_URL: 'redis://:hunter2@redis.example.com:6379/3' });
        throw new Error('expected a SettingsError');
      } catch (e) {
        expect(e).toBeInstanceOf(SettingsError);
        expect((e as SettingsError).message).toContain(
          'KVSTORE_URL selects database 3, but a Redis Cluster has database 0 only',
        );
        expect((e as SettingsError).message).not.toContain('hunter2');
      }
      expect(() => checkExternalKvstore(env, { KVSTORE_URL: 'http://:hunter2@redis.example.com' })).toThrow(
        'KVSTORE_URL="http://:***@redis.example.com',
      );
    });

    it('restarts only the backend when the app Secret changes', () => {
      expect(readersOf(names, 'external')['team-a-svc-ai-search-secrets']).toEqual(['deployment/team-a-backend']);
    });
  });
});
