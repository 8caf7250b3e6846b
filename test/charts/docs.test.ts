import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { VARIABLES } from '../../configs';
import {
  alertingRules,
  alertRules,
  expectedReceivers,
  IGNORED_AT_SYNTH,
  loadStackSettings,
  RECEIVER_NAMES,
  SECRETS,
} from '../../charts';

const doc = readFileSync(resolve(__dirname, '../../docs/stack.md'), 'utf8');

describe('docs/stack.md', () => {
  it('lists every synth-only setting and every alert-router variable', () => {
    const names = VARIABLES.filter((v) => v.synthOnly || v.path.startsWith('alerting.')).map((v) => v.name);
    expect(names.filter((n) => !doc.includes(`| \`${n}\` |`))).toEqual([]);
  });

  it('describes every generated alert and receiver', () => {
    const alerts = alertingRules(alertRules(loadStackSettings({}))).map((r) => r.alert);
    expect(alerts.filter((a) => !doc.includes(`\`${a}\``))).toEqual([]);
    expect(RECEIVER_NAMES.filter((r) => !doc.includes(`\`${r}\``))).toEqual([]);
  });

  it('shows how to create every secret key the manifests reference', () => {
    const keys = [...Object.values(SECRETS.app.keys), ...Object.values(SECRETS.alertmanager.keys)];
    expect(keys.filter((k) => !doc.includes(`--from-literal=${k}=`))).toEqual([]);
    expect(doc).toContain(`create secret generic ${SECRETS.app.name}`);
    expect(doc).toContain(`create secret generic ${SECRETS.alertmanager.name}`);
    expect(doc).toContain('does not trim a trailing newline');
  });

  it('names the variables the synth ignores', () => {
    expect(IGNORED_AT_SYNTH.filter((n) => !doc.includes(`\`${n}\``))).toEqual([]);
  });
});

// The alert table lives once, in docs/stack.md (the README links to it since issue 38).
describe('the alert table of docs/stack.md', () => {
  const rules = alertingRules(
    alertRules(loadStackSettings({ ALERT_NO_TRAFFIC_ENABLED: 'true', EMBEDDINGS_PROVIDER: 'openai' })),
  );
  const rows = (text: string) =>
    new Map(
      [...text.matchAll(/^\| `(\w+)` \| (critical|warning|info|none) \| [^|]+ \| ([^|]+) \|$/gm)].map((m) => [
        m[1],
        { severity: m[2], receivers: [...m[3].matchAll(/`([\w-]+)`/g)].map((r) => r[1]) },
      ]),
    );

  it.each([['docs/stack.md', '../../docs/stack.md']])(
    '%s: a row per alert with its severity and the receivers the routing gives it',
    (_name, path) => {
      const table = rows(readFileSync(resolve(__dirname, path), 'utf8'));
      for (const rule of rules) {
        expect([rule.alert, table.get(rule.alert)]).toEqual([
          rule.alert,
          { severity: rule.labels.severity, receivers: expectedReceivers({ alertname: rule.alert, ...rule.labels }) },
        ]);
      }
      expect(table.size).toBe(rules.length);
    },
  );
});
