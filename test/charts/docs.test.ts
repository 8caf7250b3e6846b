import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { VARIABLES } from '../../configs';
import { alertingRules, alertRules, IGNORED_AT_SYNTH, loadStackSettings, RECEIVER_NAMES, SECRETS } from '../../charts';

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
