import request from 'supertest';
import {
  ALERTS,
  alertRules,
  dashboardQueries,
  concreteQuery,
  grafanaDashboard,
  isAlertingRule,
  type RuleFile,
} from '../../charts/generators';
import { loadStackSettings } from '../../charts/stack-settings';
import {
  METRIC_FAMILIES,
  METRIC_LABELS,
  METRIC_PREFIX,
  METRICS,
  PATHS,
  RUNTIME_METRIC_PREFIXES,
  type MetricFamily,
} from '../../contract';
import { registerKvstoreWriteMetrics } from '../../service/metrics/content-metrics';
import { EmbeddingMetrics } from '../../service/metrics/embedding-metrics';
import { statusClass } from '../../service/metrics/middleware';
import { buildTestApp } from '../helpers/app';
import { promqlSelectors } from '../helpers/promql-selectors';

/** A family as the exposition shows it: `# TYPE` and the label names of its samples (`le` of buckets aside). */
interface ExposedFamily {
  readonly type: string;
  readonly labels: ReadonlySet<string>;
}

/** Families of a text exposition by name. */
function exposedFamilies(text: string): Map<string, ExposedFamily> {
  const families = new Map<string, { type: string; labels: Set<string> }>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) families.set(m[1], { type: m[2], labels: new Set() });
  for (const m of text.matchAll(/^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{([^}]*)\})? \S+$/gm)) {
    const [, sample, labels = ''] = m;
    const family = families.get(sample) ?? families.get(sample.replace(/_(bucket|count|sum)$/, ''));
    if (!family) throw new Error(`sample ${sample} has no # TYPE line`);
    for (const l of labels.matchAll(/([A-Za-z_][A-Za-z0-9_]*)="/g)) if (l[1] !== 'le') family.labels.add(l[1]);
  }
  return families;
}

const CONTRACT: readonly MetricFamily[] = Object.values(METRIC_FAMILIES);
const BY_NAME = new Map(CONTRACT.map((f) => [f.name, f]));
const isRuntime = (name: string) => RUNTIME_METRIC_PREFIXES.some((p) => name.startsWith(p));

/** What the exposition says that the contract does not: one line a family. */
function expositionProblems(families: ReadonlyMap<string, ExposedFamily>): string[] {
  const problems: string[] = [];
  for (const [name, f] of families) {
    const want = BY_NAME.get(name);
    if (!want) {
      if (!isRuntime(name)) problems.push(`${name}: exposed, not in contract/metrics.ts`);
      continue;
    }
    if (f.type !== want.type) problems.push(`${name}: exposed as ${f.type}, the contract says ${want.type}`);
    const labels = [...f.labels].sort().join(',');
    if (labels !== [...want.labels].sort().join(','))
      problems.push(`${name}: labels {${labels}}, the contract says {${want.labels.join(',')}}`);
  }
  for (const f of CONTRACT) if (!families.has(f.name)) problems.push(`${f.name}: in the contract, not exposed`);
  return problems;
}

/**
 * Labels a query may match on beyond a family's own: the target labels Prometheus adds (`job`,
 * `instance`), the stack's relabelling (`pod_ip`) and a prometheus-operator's (`namespace`, `pod`,
 * `service`, `container`, `endpoint`).
 */
const TARGET_LABELS = new Set(['job', 'instance', 'pod_ip', 'namespace', 'pod', 'service', 'container', 'endpoint']);

/** Series of the monitoring pipeline itself, named by Prometheus and Alertmanager, not by us. */
const PIPELINE_SERIES = /^(up|scrape_\w+|prometheus_\w+|alertmanager_\w+|ALERTS|ALERTS_FOR_STATE)$/;

/**
 * What the queries say that the contract does not: an own-prefix name that is no family (or a
 * histogram's `_bucket`/`_count`/`_sum`), a recorded series or an exposed runtime family; a
 * matcher on a label the family does not have; a name outside both our prefix and the pipeline's.
 */
function queryProblems(
  queries: ReadonlyArray<{ where: string; expr: string }>,
  recorded: ReadonlySet<string>,
  exposed: ReadonlySet<string>,
): string[] {
  const problems: string[] = [];
  for (const { where, expr } of queries) {
    for (const { metric, labels } of promqlSelectors(expr)) {
      if (recorded.has(metric)) continue;
      const base = metric.replace(/_(bucket|count|sum)$/, '');
      const family = BY_NAME.get(metric) ?? (BY_NAME.get(base)?.type === 'histogram' ? BY_NAME.get(base) : undefined);
      if (family) {
        const own = new Set<string>(family.labels);
        if (metric.endsWith('_bucket')) own.add('le');
        for (const l of labels)
          if (!own.has(l) && !TARGET_LABELS.has(l))
            problems.push(`${where}: ${metric}{${l}}: no such label in the contract`);
      } else if (metric.startsWith(`${METRIC_PREFIX}_`)) {
        if (!(isRuntime(metric) && exposed.has(metric))) problems.push(`${where}: ${metric}: not in the contract`);
      } else if (!PIPELINE_SERIES.test(metric)) {
        problems.push(`${where}: ${metric || '{...}'}: neither a contract family nor a pipeline series`);
      }
    }
  }
  return problems;
}

/** Every rule expression and dashboard query of a stack's settings. */
function stackQueries(env: Record<string, string>): {
  queries: Array<{ where: string; expr: string }>;
  recorded: Set<string>;
  alerts: string[];
} {
  const settings = loadStackSettings(env);
  const rules: RuleFile = alertRules(settings);
  const queries: Array<{ where: string; expr: string }> = [];
  const recorded = new Set<string>();
  const alerts: string[] = [];
  for (const g of rules.groups) {
    for (const r of g.rules) {
      if (isAlertingRule(r)) alerts.push(r.alert);
      else recorded.add(r.record);
      queries.push({ where: `${g.name}/${isAlertingRule(r) ? r.alert : r.record}`, expr: r.expr });
    }
  }
  for (const q of dashboardQueries(grafanaDashboard(settings)))
    queries.push({ where: `dashboard "${q.panel}" ${q.refId}`, expr: concreteQuery(q.expr) });
  return { queries, recorded, alerts };
}

/** Settings that together generate every rule: per-pod scraping, NoTraffic, an embedder, operator mode. */
const STACKS: ReadonlyArray<Record<string, string>> = [
  {},
  { BACKEND_REPLICAS: '2', ALERT_NO_TRAFFIC_ENABLED: 'true', EMBEDDINGS_PROVIDER: 'openai' },
  { MONITORING_MODE: 'operator', NAMESPACE: 'search' },
];

describe('the contract between the service and the stack (contract/metrics.ts)', () => {
  let exposition = '';

  beforeAll(async () => {
    const t = await buildTestApp({}, { processMetrics: true });
    try {
      // Content in the kvstore adds this gauge; registered here as features.ts does there, without a Redis.
      registerKvstoreWriteMetrics(t.deps.registry, () => 'ok');
      // An embedder adds its families (issue 41); registered here as its wiring will, without a provider.
      new EmbeddingMetrics(t.deps.registry).call(0.01);
      const token = t.settings.service.apiToken;
      const auth = token ? { Authorization: `Bearer ${token}` } : {};
      await request(t.app).post('/api/ingest').set(auth).send({
        id: 'kingfisher',
        type: 'article',
        title: 'Kingfishers',
        body: 'Kingfishers dive for fish.',
        tags: [],
      });
      await request(t.app).get('/api/search').query({ q: 'kingfisher' });
      await request(t.app).get('/api/v1/articles/kingfisher');
      await request(t.app).get('/api/v1/articles/absent');
      await request(t.app).get(PATHS.health);
      exposition = (await request(t.app).get(PATHS.metrics)).text;
    } finally {
      await t.close();
    }
  });

  it('is what the running service exposes: every family by name, type and labels, and no other', () => {
    const families = exposedFamilies(exposition);
    expect(expositionProblems(families)).toEqual([]);
    // The runtime families are there too (prom-client names them under our prefix).
    expect([...families.keys()].filter(isRuntime).length).toBeGreaterThan(5);
  });

  it('has the label values the rules select on (METRIC_LABELS) among those the service writes', () => {
    expect(exposition).toContain(`${METRICS.rateLimitBackend}{backend="${METRIC_LABELS.memoryBackend}"}`);
    expect(exposition).toContain(`${METRICS.kvstoreWriteConfirmation}{state="${METRIC_LABELS.writesConfirmed}"}`);
    expect(exposition).toContain(`${METRICS.contentWriteState}{state="${METRIC_LABELS.contentWritesOk}"} 1`);
    expect(exposition).toMatch(
      new RegExp(`^${METRICS.httpRequestDuration}_count\\{[^}]*status_class="${statusClass(404)}"`, 'm'),
    );
    expect(statusClass(503)).toBe(METRIC_LABELS.serverErrorClass);
  });

  it('is what the alert rules, recording rules and dashboard query', () => {
    const exposed = new Set(exposedFamilies(exposition).keys());
    const all = STACKS.map(stackQueries);
    // Every alert the generators know is among the rules checked.
    expect(Object.values(ALERTS).filter((a) => !all.some((s) => s.alerts.includes(a)))).toEqual([]);
    for (const s of all) expect(queryProblems(s.queries, s.recorded, exposed)).toEqual([]);
    // The check reads selectors: every query names at least one (the Watchdog's `vector(1)` aside).
    for (const s of all)
      expect(s.queries.filter((q) => promqlSelectors(q.expr).length === 0 && q.expr !== 'vector(1)')).toEqual([]);
  });

  it('bites: a family renamed, retyped or relabelled on the service side, or a name or label changed in a query, fails', () => {
    const rename = exposition.replace(/svc_ai_search_cache_size\b/g, 'svc_ai_search_cache_entries');
    expect(expositionProblems(exposedFamilies(rename))).toEqual([
      'svc_ai_search_cache_entries: exposed, not in contract/metrics.ts',
      'svc_ai_search_cache_size: in the contract, not exposed',
    ]);
    const retype = exposition.replace(
      '# TYPE svc_ai_search_health_score gauge',
      '# TYPE svc_ai_search_health_score counter',
    );
    expect(expositionProblems(exposedFamilies(retype))).toEqual([
      'svc_ai_search_health_score: exposed as counter, the contract says gauge',
    ]);
    const relabel = exposition.replace(
      /svc_ai_search_requests_by_type_total\{type=/g,
      'svc_ai_search_requests_by_type_total{kind=',
    );
    expect(expositionProblems(exposedFamilies(relabel))).toEqual([
      'svc_ai_search_requests_by_type_total: labels {kind}, the contract says {type}',
    ]);

    const exposed = new Set(exposedFamilies(exposition).keys());
    const broken = [
      { where: 'renamed', expr: 'sum by (job) (rate(svc_ai_search_request_total{job="x"}[5m]))' },
      { where: 'relabelled', expr: 'max by (job) (svc_ai_search_rate_limit_backend{job="x", store="memory"}) == 1' },
      { where: 'foreign', expr: 'rate(http_requests_total[5m])' },
    ];
    expect(queryProblems(broken, new Set(), exposed)).toEqual([
      'renamed: svc_ai_search_request_total: not in the contract',
      'relabelled: svc_ai_search_rate_limit_backend{store}: no such label in the contract',
      'foreign: http_requests_total: neither a contract family nor a pipeline series',
    ]);
  });

  it('reads PromQL selectors, not functions, aggregations, label lists, ranges or numbers', () => {
    const expr =
      'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{job="j", route!~"/x"}[5m] offset 1h))) > 0.5\n' +
      'and on (job) group_left(route) b * 3600 >= 1e3 or absent(up{job="j"}) unless count without (pod) (c{d="}"})';
    expect(promqlSelectors(expr)).toEqual([
      { metric: 'a_bucket', labels: ['job', 'route'] },
      { metric: 'b', labels: [] },
      { metric: 'up', labels: ['job'] },
      { metric: 'c', labels: ['d'] },
    ]);
  });
});
