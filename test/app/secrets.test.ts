import { parseSecretsFile, readersOf, REQUIRED_SECRET_VARIABLES, secretManifests } from '../../app/secrets';
import { stackNames } from '../../charts';

describe('make secrets (app/secrets.ts)', () => {
  const names = stackNames('team-a-');

  it('builds the app Secret under the stack’s name, and the Alertmanager one only when a destination secret is set', () => {
    const only = secretManifests({ API_TOKEN: 't0k', KVSTORE_PASSWORD: 'pw' }, names, 'ns');
    expect(only).toEqual([
      expect.objectContaining({ kind: 'Secret', metadata: expect.objectContaining({ name: 'team-a-svc-ai-search-secrets', namespace: 'ns' }), stringData: { 'api-token': 't0k', 'kvstore-password': 'pw' } }),
    ]);
    const all = secretManifests({ API_TOKEN: 't', KVSTORE_PASSWORD: 'p', AI_API_KEY: 'k', SMTP_PASSWORD: 's', CHAT_WEBHOOK_URL: 'https://x' }, names, 'ns');
    expect(all.map((m) => [m.metadata.name, Object.keys(m.stringData).sort()])).toEqual([
      ['team-a-svc-ai-search-secrets', ['ai-api-key', 'api-token', 'kvstore-password']],
      ['team-a-alertmanager-secrets', ['chat-webhook-url', 'smtp-password']],
    ]);
  });

  it('refuses to run without what production needs, naming the variables and no value', () => {
    expect(REQUIRED_SECRET_VARIABLES).toEqual(['API_TOKEN', 'KVSTORE_PASSWORD']);
    expect(() => secretManifests({ AI_API_KEY: 'sk-secret' }, names, 'ns')).toThrow(/missing API_TOKEN, KVSTORE_PASSWORD/);
    try {
      secretManifests({ AI_API_KEY: 'sk-secret' }, names, 'ns');
    } catch (e) {
      expect((e as Error).message).not.toContain('sk-secret');
    }
  });

  it('reads KEY=VALUE files with comments, export and quotes', () => {
    expect(parseSecretsFile('# comment\nexport API_TOKEN="a b"\nKVSTORE_PASSWORD=\'p=q\'\n\nnot a line\n')).toEqual({ API_TOKEN: 'a b', KVSTORE_PASSWORD: 'p=q' });
  });

  it('restarts exactly the workloads that read a changed Secret', () => {
    expect(readersOf(names)).toEqual({
      'team-a-svc-ai-search-secrets': ['deployment/team-a-backend', 'statefulset/team-a-kvstore'],
      'team-a-alertmanager-secrets': ['deployment/team-a-alertmanager'],
    });
  });
});
