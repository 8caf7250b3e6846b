import { loadStackSettings } from '../../../charts/stack-settings';
import {
  alertmanagerConfig,
  childRoutes,
  expectedReceivers,
  RECEIVER_NAMES,
  ROUTING_TABLE,
  toYaml,
  type AlertmanagerConfig,
  type Receiver,
} from '../../../charts/generators';
import {
  checkAlertmanagerConfig,
  NAMED_ROUTE_CASES,
  routeCaseProblems,
  routeCases,
  workspace,
} from '../../../tools/validate';
import { promTools, requirePromTools } from '../../../tools/harness/prom-tools';
import { SECRET_ENV, SECRET_VALUES } from '../fixtures/secrets';

const plain = alertmanagerConfig(loadStackSettings({}));
const full = alertmanagerConfig(loadStackSettings({ ...SECRET_ENV, WEBHOOK_URL: 'https://hooks.example.com/alerts' }));
const receiver = (c: AlertmanagerConfig, name: string): Receiver => {
  const r = c.receivers.find((x) => x.name === name);
  if (!r) throw new Error(`no receiver ${name}`);
  return r;
};

describe('alertmanagerConfig', () => {
  it('names the receivers of the issue, once each', () => {
    expect(full.receivers.map((r) => r.name)).toEqual([
      'default',
      'critical',
      'on-call',
      'warning',
      'info',
      'backend-team',
      'error-rate-alerts',
      'heartbeat',
    ]);
    expect(RECEIVER_NAMES).toHaveLength(8);
  });

  it('sends the heartbeat to HEARTBEAT_URL only, first and without continue, and to nowhere when it is unset', () => {
    expect(receiver(plain, 'heartbeat')).toEqual({ name: 'heartbeat' });
    const c = alertmanagerConfig(
      loadStackSettings({ HEARTBEAT_URL: 'https://hc.example.com/ping/abc', HEARTBEAT_INTERVAL: '2m' }),
    );
    expect(receiver(c, 'heartbeat')).toEqual({
      name: 'heartbeat',
      webhook_configs: [{ url: 'https://hc.example.com/ping/abc', send_resolved: false }],
    });
    expect(c.route.routes[0]).toEqual({
      receiver: 'heartbeat',
      matchers: ['alertname="Watchdog"'],
      continue: false,
      group_wait: '0s',
      group_interval: '1m',
      repeat_interval: '2m',
    });
    expect(expectedReceivers({ alertname: 'Watchdog', severity: 'none', service: 'svc-ai-search-backend' })).toEqual([
      'heartbeat',
    ]);
  });

  it('gives each receiver the destinations of spec §6.2', () => {
    const dest = (name: string) => {
      const r = receiver(full, name);
      return {
        chat: r.slack_configs?.map((s) => s.channel),
        email: r.email_configs?.map((e) => e.to),
        webhook: r.webhook_configs?.map((w) => w.url),
        incident: r.pagerduty_configs?.length,
      };
    };
    expect(dest('default')).toEqual({
      chat: ['#alerts'],
      email: ['alerts@example.com'],
      webhook: undefined,
      incident: undefined,
    });
    expect(dest('critical')).toEqual({
      chat: ['#alerts-critical'],
      email: ['critical@example.com'],
      webhook: ['https://hooks.example.com/alerts'],
      incident: undefined,
    });
    expect(dest('on-call')).toEqual({
      chat: ['#on-call'],
      email: ['oncall@example.com'],
      webhook: undefined,
      incident: 1,
    });
    expect(dest('warning')).toEqual({
      chat: ['#alerts-warning'],
      email: ['warnings@example.com'],
      webhook: undefined,
      incident: undefined,
    });
    expect(dest('info')).toEqual({ chat: ['#alerts-info'], email: undefined, webhook: undefined, incident: undefined });
    expect(dest('backend-team')).toEqual({
      chat: ['#backend'],
      email: ['backend-team@example.com'],
      webhook: undefined,
      incident: undefined,
    });
    expect(dest('error-rate-alerts')).toEqual({
      chat: ['#errors'],
      email: ['errors@example.com'],
      webhook: undefined,
      incident: undefined,
    });
  });

  it('takes channels and addresses from settings', () => {
    const c = alertmanagerConfig(
      loadStackSettings({
        CHAT_WEBHOOK_URL: SECRET_ENV.CHAT_WEBHOOK_URL,
        CHAT_CHANNEL_ONCALL: '#pager',
        EMAIL_ONCALL: 'pager@corp.example',
        SMTP_HOST: 'mail.corp.example',
        SMTP_PORT: '465',
      }),
    );
    expect(receiver(c, 'on-call').slack_configs?.[0].channel).toBe('#pager');
    expect(receiver(c, 'on-call').email_configs?.[0].to).toBe('pager@corp.example');
    expect(c.global.smtp_smarthost).toBe('mail.corp.example:465');
  });

  it('sends no resolved notifications from info, and resolved ones from everything else', () => {
    for (const r of full.receivers.filter((x) => x.name !== 'heartbeat')) {
      const flags = [
        ...(r.slack_configs ?? []),
        ...(r.email_configs ?? []),
        ...(r.webhook_configs ?? []),
        ...(r.pagerduty_configs ?? []),
      ].map((d) => d.send_resolved);
      expect(flags.length).toBeGreaterThan(0);
      expect(new Set(flags)).toEqual(new Set([r.name !== 'info']));
    }
  });

  it('reads every secret from a mounted file and writes no secret value', () => {
    const text = toYaml(full);
    for (const v of SECRET_VALUES) expect(text).not.toContain(v);
    expect(full.global).toMatchObject({
      smtp_auth_username: 'alertmanager@example.com',
      smtp_auth_password_file: '/etc/alertmanager/secrets/smtp-password',
      slack_api_url_file: '/etc/alertmanager/secrets/chat-webhook-url',
    });
    expect(receiver(full, 'critical').webhook_configs?.[0].http_config).toEqual({
      authorization: { type: 'Bearer', credentials_file: '/etc/alertmanager/secrets/webhook-bearer-token' },
    });
    expect(receiver(full, 'on-call').pagerduty_configs).toEqual([
      { routing_key_file: '/etc/alertmanager/secrets/incident-service-key', send_resolved: true },
    ]);
  });

  it('leaves out a destination whose secret is not set at synth time; receivers stay valid without any', () => {
    expect(plain.global.slack_api_url_file).toBeUndefined();
    expect(plain.global.smtp_auth_password_file).toBeUndefined();
    expect(plain.global.smtp_auth_username).toBeUndefined();
    expect(receiver(plain, 'info')).toEqual({ name: 'info' });
    expect(receiver(plain, 'critical').webhook_configs).toBeUndefined();
    expect(receiver(plain, 'on-call').pagerduty_configs).toBeUndefined();
    const noToken = alertmanagerConfig(loadStackSettings({ WEBHOOK_URL: 'https://hooks.example.com/a' }));
    expect(receiver(noToken, 'critical').webhook_configs).toEqual([
      { url: 'https://hooks.example.com/a', send_resolved: true },
    ]);
  });

  it('groups by the settings', () => {
    expect(plain.route).toMatchObject({
      receiver: 'default',
      group_by: ['alertname', 'severity', 'service'],
      group_wait: '30s',
      group_interval: '5m',
      repeat_interval: '4h',
    });
    const c = alertmanagerConfig(
      loadStackSettings({
        ALERT_GROUP_BY: 'alertname,instance',
        ALERT_GROUP_WAIT: '10s',
        ALERT_GROUP_INTERVAL: '1m',
        ALERT_REPEAT_INTERVAL: '12h',
      }),
    );
    expect(c.route).toMatchObject({
      group_by: ['alertname', 'instance'],
      group_wait: '10s',
      group_interval: '1m',
      repeat_interval: '12h',
    });
  });

  it('inhibits: critical silences warning and info, warning silences info, BackendDown the backend’s other alerts', () => {
    expect(plain.inhibit_rules).toEqual([
      {
        source_matchers: ['severity="critical"'],
        target_matchers: ['severity=~"warning|info"'],
        equal: ['alertname', 'service'],
      },
      {
        source_matchers: ['severity="warning"'],
        target_matchers: ['severity="info"'],
        equal: ['alertname', 'service'],
      },
      {
        source_matchers: ['alertname="BackendDown"', 'service="svc-ai-search-backend"'],
        target_matchers: ['service="svc-ai-search-backend"', 'alertname!="BackendDown"', 'component!="monitoring"'],
      },
    ]);
    const c = alertmanagerConfig(loadStackSettings({ ALERT_INHIBIT_EQUAL: 'alertname,service,instance' }));
    expect(c.inhibit_rules[0].equal).toEqual(['alertname', 'service', 'instance']);
  });

  describe('routing', () => {
    it('compiles §6.2 into continue routes, with on-call reachable once per alert', () => {
      expect(plain.route.routes.slice(1)).toEqual([
        { receiver: 'critical', matchers: ['severity="critical"'], continue: true },
        { receiver: 'on-call', matchers: ['severity="critical"'], continue: true },
        { receiver: 'on-call', matchers: ['alertname="BackendDown"', 'severity!="critical"'], continue: true },
        { receiver: 'warning', matchers: ['severity="warning"'], continue: true },
        { receiver: 'info', matchers: ['severity="info"'], continue: true },
        { receiver: 'backend-team', matchers: ['service="svc-ai-search-backend"'], continue: true },
        { receiver: 'error-rate-alerts', matchers: ['alertname="HighErrorRate"'], continue: true },
      ]);
    });

    it('refuses a table it cannot make duplicate-free', () => {
      expect(() =>
        childRoutes([
          ...ROUTING_TABLE,
          { match: { severity: 'critical', service: 'x' }, receivers: ['info'] },
          { match: { team: 'y' }, receivers: ['info'] },
        ]),
      ).toThrow('cannot negate the multi-label match');
    });

    it('the reference agrees with the hand-written cases of the issue', () => {
      for (const c of NAMED_ROUTE_CASES) expect(expectedReceivers(c.labels)).toEqual(c.expected);
    });
  });

  describe('judged by amtool', () => {
    beforeAll(requirePromTools);

    it.each([
      ['defaults (no secret-backed destination, an empty info receiver)', plain],
      ['every destination enabled', full],
    ])('%s: amtool check-config passes', (_name, config) => {
      const ws = workspace();
      try {
        const r = checkAlertmanagerConfig(promTools, ws, toYaml(config));
        expect(r.detail).toContain('SUCCESS');
        expect(r.detail).toContain('8 receivers');
        expect(r.ok).toBe(true);
      } finally {
        ws.dispose();
      }
    });

    it('amtool config routes test: every §6.2 row, the named combinations and all 24 label combinations', () => {
      const ws = workspace();
      try {
        const path = ws.write('alertmanager.yml', toYaml(full));
        const cases = routeCases();
        expect(cases.length).toBeGreaterThanOrEqual(5 + ROUTING_TABLE.length + 24);
        expect(routeCaseProblems(promTools, path, cases)).toEqual([]);
      } finally {
        ws.dispose();
      }
    });

    it('catches a route tree that reaches a receiver twice or misses one', () => {
      const ws = workspace();
      try {
        const dup = {
          ...plain,
          route: {
            ...plain.route,
            routes: plain.route.routes.map((r) => ({ ...r, matchers: r.matchers.filter((m) => !m.includes('!=')) })),
          },
        };
        const problems = routeCaseProblems(promTools, ws.write('dup.yml', toYaml(dup)), NAMED_ROUTE_CASES);
        expect(problems).toEqual([
          'a critical BackendDown of this service: a receiver is reached twice: critical,on-call,on-call,backend-team',
        ]);
        const noContinue = {
          ...plain,
          route: { ...plain.route, routes: plain.route.routes.map((r) => ({ ...r, continue: false })) },
        };
        // Every named case with more than one receiver: all but "matches nothing" and the heartbeat.
        expect(routeCaseProblems(promTools, ws.write('stop.yml', toYaml(noContinue)), NAMED_ROUTE_CASES)).toHaveLength(
          NAMED_ROUTE_CASES.length - 2,
        );
      } finally {
        ws.dispose();
      }
    });
  });
});
