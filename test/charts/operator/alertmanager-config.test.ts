import { alertmanagerConfigSpec, crdMatcher, RECEIVERS, stackNames } from '../../../charts';
import { alertmanagerConfig } from '../../../charts/generators/alertmanager-config';
import { loadStackSettings } from '../../../charts/stack-settings';
import { find, SECRET_ENV, SECRET_VALUES, synthStack, type Json } from '../fixtures/stack';

describe('BackendAlertmanagerConfig', () => {
  const env = { ...SECRET_ENV, MONITORING_MODE: 'operator', WEBHOOK_URL: 'https://hooks.example.com/alerts' };
  const stack = synthStack(env);
  const amc: Json = find(stack.manifests, 'AlertmanagerConfig', 'alertmanager');

  it('has the receivers of spec §6.2: default, critical, on-call, warning, info, backend-team, error-rate-alerts', () => {
    expect(amc.apiVersion).toBe('monitoring.coreos.com/v1alpha1');
    expect(amc.spec.receivers.map((r: Json) => r.name)).toEqual([
      'default',
      'critical',
      'on-call',
      'warning',
      'info',
      'backend-team',
      'error-rate-alerts',
    ]);
  });

  it('routes as the standalone alertmanager.yml does, minus the heartbeat (the cluster runs its own Watchdog)', () => {
    const doc = alertmanagerConfig(stack.settings);
    expect(amc.spec.route.receiver).toBe('default');
    expect(amc.spec.route.groupBy).toEqual(doc.route.group_by);
    const children = doc.route.routes.filter((r) => r.receiver !== RECEIVERS.heartbeat);
    expect(amc.spec.route.routes).toEqual(
      children.map((r) => ({ receiver: r.receiver, continue: true, matchers: r.matchers.map(crdMatcher) })),
    );
    expect(amc.spec.inhibitRules).toHaveLength(doc.inhibit_rules.length);
  });

  it('names every secret as a SecretKeySelector of the Alertmanager Secret, never by value', () => {
    const text = [...stack.files.values()].join('\n');
    for (const v of SECRET_VALUES) expect(text).not.toContain(v);
    const critical = amc.spec.receivers.find((r: Json) => r.name === 'critical');
    const onCall = amc.spec.receivers.find((r: Json) => r.name === 'on-call');
    expect(critical.slackConfigs[0].apiURL).toEqual({ name: 'alertmanager-secrets', key: 'chat-webhook-url' });
    expect(critical.emailConfigs[0].authPassword).toEqual({ name: 'alertmanager-secrets', key: 'smtp-password' });
    expect(critical.webhookConfigs[0]).toMatchObject({
      url: 'https://hooks.example.com/alerts',
      httpConfig: {
        authorization: { type: 'Bearer', credentials: { name: 'alertmanager-secrets', key: 'webhook-bearer-token' } },
      },
    });
    expect(onCall.pagerdutyConfigs[0].routingKey).toEqual({
      name: 'alertmanager-secrets',
      key: 'incident-service-key',
    });
  });

  it('sends no resolved notifications to info', () => {
    const info = amc.spec.receivers.find((r: Json) => r.name === 'info');
    expect(info.slackConfigs[0].sendResolved).toBe(false);
  });

  it('follows the name prefix in the Secret it references', () => {
    const s = loadStackSettings({ ...env, NAME_PREFIX: 'team-a-' });
    const spec = alertmanagerConfigSpec(alertmanagerConfig(s), stackNames('team-a-'));
    expect(JSON.stringify(spec)).toContain('"name":"team-a-alertmanager-secrets"');
  });

  it('translates every matcher form and refuses one it cannot read', () => {
    expect(crdMatcher('severity=~"warning|info"')).toEqual({
      name: 'severity',
      matchType: '=~',
      value: 'warning|info',
    });
    expect(crdMatcher('alertname!="BackendDown"')).toEqual({
      name: 'alertname',
      matchType: '!=',
      value: 'BackendDown',
    });
    expect(() => crdMatcher('severity = critical')).toThrow(/cannot translate/);
  });
});
