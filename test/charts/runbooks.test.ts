import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ALERTS, alertingRules, alertRules, loadStackSettings, runbookAnchor } from '../../charts';

const doc = readFileSync(resolve(__dirname, '../../docs/runbooks.md'), 'utf8');
const headings = [...doc.matchAll(/^## (\S+)$/gm)].map((m) => m[1]);

/** Every alert the generators can produce: the settings that switch the optional ones on. */
const everyAlert = alertingRules(
  alertRules(
    loadStackSettings({ ALERT_NO_TRAFFIC_ENABLED: 'true', BACKEND_REPLICAS: '3', EMBEDDINGS_PROVIDER: 'openai' }),
  ),
).map((r) => r.alert);

function section(name: string): string {
  const start = doc.indexOf(`## ${name}\n`);
  const next = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, next === -1 ? undefined : next);
}

describe('docs/runbooks.md', () => {
  it('has one heading for every alert the rules generate, and none for an alert that does not exist', () => {
    expect([...headings].sort()).toEqual([...everyAlert].sort());
    expect([...headings].sort()).toEqual([...Object.values(ALERTS)].sort());
  });

  it('gives each alert what it means, the query to look at, likely causes and what to do', () => {
    for (const name of headings) {
      const s = section(name);
      for (const part of ['**Means**', '**Query**', '**Likely causes**', '**Do**'])
        expect(`${name}: ${s.includes(part)}`).toBe(`${name}: true`);
    }
  });

  it('is where every runbook_url points: the anchor of the heading', () => {
    const env = { ALERT_NO_TRAFFIC_ENABLED: 'true', EMBEDDINGS_PROVIDER: 'openai' };
    for (const rule of alertingRules(alertRules(loadStackSettings(env)))) {
      expect(rule.annotations.runbook_url.endsWith(`#${runbookAnchor(rule.alert)}`)).toBe(true);
      // GitHub's anchor of a heading made of letters only is the heading in lower case.
      expect(headings.map((h) => h.toLowerCase())).toContain(runbookAnchor(rule.alert));
    }
  });
});
