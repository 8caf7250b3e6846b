import {
  BURN_RATE_ALERTS,
  concreteQuery,
  dashboardPanels,
  dashboardQueries,
  DATASOURCE_VARIABLE,
  grafanaDashboard,
  toYaml,
} from '../../../charts';
import { loadStackSettings } from '../../../charts/stack-settings';
import { GRADE_VALUES } from '../../../contract';
import { checkRules, workspace } from '../../../tools/validate';
import { promTools, requirePromTools } from '../../../tools/harness/prom-tools';
import { SPEC_FAMILIES } from '../../helpers/spec-families';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- dashboard JSON is read freely

describe('grafanaDashboard', () => {
  const settings = loadStackSettings({});
  const dashboard = grafanaDashboard(settings);
  const queries = dashboardQueries(dashboard);
  const panels = dashboard.panels as Json[];
  const byTitle = (prefix: string) => {
    const p = panels.find((x) => typeof x.title === 'string' && x.title.startsWith(prefix));
    if (!p) throw new Error(`no panel ${prefix}`);
    return p;
  };

  it('uses every one of the spec’s 13 svc_ai_search_* families', () => {
    const text = queries.map((q) => q.expr).join('\n');
    expect(SPEC_FAMILIES.filter((f) => !new RegExp(`\\b${f}\\{`).test(text))).toEqual([]);
  });

  it('has the panels the issue lists', () => {
    const titles = panels.map((p) => p.title as string);
    for (const t of [
      'Requests per second by type',
      'Errors per second by status class and route',
      'Latency percentiles',
      'Success rate',
      'Health score',
      'Performance grade',
      'AI tokens per hour',
      'Cache entries',
      'Cache usage',
      'Rate-limit decisions by tier',
      'Near the limit, by tier',
      'Rate-limit store',
      'Requests per second per pod',
      'Health score per pod',
      'Error budget left (30 days)',
      'Burn rate by window',
    ])
      expect(titles.some((x) => x.startsWith(t))).toBe(true);
  });

  it('shows the estimated part of the tokens and the kvstore evictions beside their alerts', () => {
    const tokens = byTitle('AI tokens per hour').targets.map((t: Json) => t.expr as string);
    expect(tokens.some((e: string) => /increase\(svc_ai_search_tokens_estimated_total\{[^}]*\}\[1h\]\)/.test(e))).toBe(
      true,
    );
    const evictions = byTitle('Kvstore evictions (KvstoreEvictingKeys)').targets.map((t: Json) => t.expr as string);
    expect(evictions).toEqual([
      expect.stringMatching(/^max by \(store\) \(increase\(svc_ai_search_kvstore_evicted_keys_total\{/),
    ]);
  });

  it('queries through the Prometheus data source variable, never a fixed data source', () => {
    expect((dashboard.templating as Json).list).toEqual([
      expect.objectContaining({ type: 'datasource', name: DATASOURCE_VARIABLE, query: 'prometheus' }),
    ]);
    for (const p of panels.filter((x) => x.type !== 'row')) {
      expect(p.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      for (const t of p.targets) expect(t.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
    }
  });

  it('takes its thresholds from the settings the alerts use', () => {
    const env = {
      ALERT_ERROR_RATE_THRESHOLD: '0.02',
      ALERT_LATENCY_P99_SECONDS: '1.5',
      ALERT_HEALTH_SCORE_MIN: '80',
      ALERT_TOKENS_PER_HOUR: '5000',
      ALERT_CACHE_USAGE_PERCENT: '75',
      SLO_AVAILABILITY: '0.99',
      BACKEND_REPLICAS: '3',
    };
    const d = grafanaDashboard(loadStackSettings(env));
    const steps = (title: string) =>
      ((d.panels as Json[]).find((p) => p.title.startsWith(title)) as Json).fieldConfig.defaults.thresholds.steps.map(
        (s: Json) => s.value,
      );
    expect(steps('Server error ratio')).toEqual([null, 0.02]);
    expect(steps('Latency percentiles')).toEqual([null, 1.5]);
    expect(steps('Health score')).toEqual([null, 80]);
    expect(steps('AI tokens per hour')).toEqual([null, 5000]);
    expect(steps('Cache usage')).toEqual([null, 75]);
    expect(steps('Targets up')).toEqual([null, 3]);
    expect(steps('Burn rate by window')).toEqual([
      null,
      ...[...new Set(BURN_RATE_ALERTS.flatMap((a) => a.windows.map((w) => w.factor)))].sort((a, b) => a - b),
    ]);
    const budget = (d.panels as Json[]).find((p) => p.title.startsWith('Burn rate')) as Json;
    expect(budget.targets[0].expr).toMatch(/\) \/ 0\.01$/);
  });

  it('colours: above a limit red, below a floor red; shows the grade as a letter', () => {
    expect(byTitle('Latency percentiles').fieldConfig.defaults.thresholds.steps).toEqual([
      { value: null, color: 'green' },
      { value: 2, color: 'red' },
    ]);
    expect(byTitle('Health score').fieldConfig.defaults.thresholds.steps).toEqual([
      { value: null, color: 'red' },
      { value: 70, color: 'green' },
    ]);
    expect(byTitle('Performance grade').fieldConfig.defaults.mappings[0].options).toMatchObject({
      '4': { text: 'A' },
      '0': { text: 'F' },
    });
  });

  it('shows every grade the service sets as its own letter: one encoding, GRADE_VALUES of contract/metrics.ts', () => {
    const options = byTitle('Performance grade').fieldConfig.defaults.mappings[0].options as Json;
    expect(Object.keys(options).sort()).toEqual(Object.values(GRADE_VALUES).map(String).sort());
    for (const [letter, value] of Object.entries(GRADE_VALUES)) expect(options[String(value)].text).toBe(letter);
  });

  it('scopes every query like the rules: the job, plus the namespace in operator mode', () => {
    for (const q of queries)
      for (const m of q.expr.matchAll(/\{([^}]*)\}/g)) expect(m[1]).toMatch(/^job="svc-ai-search-backend"/);
    const op = dashboardQueries(
      grafanaDashboard(loadStackSettings({ MONITORING_MODE: 'operator', NAMESPACE: 'search' })),
    );
    for (const q of op)
      for (const m of q.expr.matchAll(/\{([^}]*)\}/g))
        expect(m[1]).toMatch(/^job="svc-ai-search-backend", namespace="search"/);
  });

  it('is deterministic and carries the name prefix in its uid', () => {
    expect(JSON.stringify(grafanaDashboard(settings))).toBe(JSON.stringify(dashboard));
    expect(grafanaDashboard(loadStackSettings({ NAME_PREFIX: 'team-a-' })).uid).toBe('team-a-svc-ai-search-backend');
  });

  it('lays every panel out inside the 24-column grid, below its row', () => {
    for (const p of panels) expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
    expect(dashboardPanels(settings).flatMap((r) => r.panels)).toHaveLength(
      panels.filter((p) => p.type !== 'row').length,
    );
  });

  describe('judged by promtool', () => {
    beforeAll(requirePromTools);
    it('every panel query parses: each one as a recording rule passes promtool check rules', () => {
      for (const mode of ['standalone', 'operator']) {
        const qs = dashboardQueries(grafanaDashboard(loadStackSettings({ MONITORING_MODE: mode })));
        const file = {
          groups: [
            {
              name: 'dashboard',
              rules: qs.map((q, i) => ({
                record: `svc_ai_search_dashboard:query${i}`,
                expr: concreteQuery(q.expr, '5m'),
              })),
            },
          ],
        };
        const ws = workspace();
        try {
          const r = checkRules(promTools, ws, toYaml(file));
          expect(r.detail).toContain(`SUCCESS: ${qs.length} rules found`);
          expect(r.ok).toBe(true);
        } finally {
          ws.dispose();
        }
      }
    });
  });
});
