import { dump } from 'js-yaml';
import { isDeepStrictEqual } from 'node:util';
import type { Settings } from '../../configs';
import { alertRules } from '../../charts/generators/alert-rules';
import { SECRETS, stackNames, type StackNames } from '../../charts/generators/names';
import { RECEIVERS } from '../../charts/generators/routing';
import type { RuleFile } from '../../charts/generators/rule-types';
import { toYaml } from '../../charts/generators/yaml';
import type { Manifest } from '../read-manifests';
import { ALERTMANAGER_FILE, checkAlertmanagerConfig } from './amtool';
import { checkRules, testRules } from './promtool';
import { routeCases, type RouteCase } from './route-cases';
import { ruleUnitTests } from './rule-tests';
import { problemsCheck, workspace, type CheckResult, type ToolRunner } from './tools';
import { routeCaseProblems } from './route-case-problems';
import { PATHS, SCRAPE_JOB } from '../../contract';

/** The three custom resources of operator mode, as synthesized. */
export interface OperatorResources {
  readonly serviceMonitor: Manifest;
  readonly prometheusRule: Manifest;
  readonly alertmanagerConfig: Manifest;
}

function only(manifests: readonly Manifest[], kind: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0];
}

/** The ServiceMonitor, PrometheusRule and AlertmanagerConfig; throws unless there is exactly one of each. */
export function operatorResources(manifests: readonly Manifest[]): OperatorResources {
  return {
    serviceMonitor: only(manifests, 'ServiceMonitor'),
    prometheusRule: only(manifests, 'PrometheusRule'),
    alertmanagerConfig: only(manifests, 'AlertmanagerConfig'),
  };
}

/** The PrometheusRule's groups as a rule file (what `promtool check rules` reads). */
export function ruleFileOf(prometheusRule: Manifest): RuleFile {
  return { groups: ((prometheusRule.spec ?? {}) as { groups?: RuleFile['groups'] }).groups ?? [] };
}

interface CrdMatcher {
  readonly name: string;
  readonly matchType?: string;
  readonly value?: string;
}
interface CrdRoute {
  readonly receiver?: string;
  readonly matchers?: readonly CrdMatcher[];
  readonly continue?: boolean;
  readonly groupBy?: readonly string[];
  readonly groupWait?: string;
  readonly groupInterval?: string;
  readonly repeatInterval?: string;
  readonly routes?: readonly CrdRoute[];
}
interface CrdSpec {
  readonly route?: CrdRoute;
  readonly receivers?: ReadonlyArray<{ readonly name: string }>;
  readonly inhibitRules?: ReadonlyArray<{
    readonly sourceMatch?: readonly CrdMatcher[];
    readonly targetMatch?: readonly CrdMatcher[];
    readonly equal?: readonly string[];
  }>;
}

/** Receiver of the cluster's own root route in `operatorRoutingConfig`: what no AlertmanagerConfig claims. */
export const CLUSTER_DEFAULT_RECEIVER = 'cluster-default';

const matcherText = (m: CrdMatcher) => `${m.name}${m.matchType ?? '='}${JSON.stringify(m.value ?? '')}`;

function routeYaml(r: CrdRoute): Record<string, unknown> {
  return {
    ...(r.receiver ? { receiver: r.receiver } : {}),
    ...(r.matchers ? { matchers: r.matchers.map(matcherText) } : {}),
    ...(r.continue !== undefined ? { continue: r.continue } : {}),
    ...(r.groupBy ? { group_by: r.groupBy } : {}),
    ...(r.groupWait ? { group_wait: r.groupWait } : {}),
    ...(r.groupInterval ? { group_interval: r.groupInterval } : {}),
    ...(r.repeatInterval ? { repeat_interval: r.repeatInterval } : {}),
    ...(r.routes ? { routes: r.routes.map(routeYaml) } : {}),
  };
}

/**
 * The routing part of an `alertmanager.yml` as the operator builds it from an AlertmanagerConfig:
 * the config's route under the cluster's root, behind a `namespace="<its namespace>"` matcher,
 * and its inhibition rules with that matcher added. Receivers without destinations: this is for
 * `amtool config routes test`, which resolves routes only.
 */
export function operatorRoutingConfig(alertmanagerConfig: Manifest, namespace: string): Record<string, unknown> {
  const spec = (alertmanagerConfig.spec ?? {}) as CrdSpec;
  const ns = `namespace=${JSON.stringify(namespace)}`;
  return {
    route: {
      receiver: CLUSTER_DEFAULT_RECEIVER,
      routes: [
        {
          ...routeYaml(spec.route ?? {}),
          matchers: [ns, ...(spec.route?.matchers ?? []).map(matcherText)],
          continue: true,
        },
      ],
    },
    receivers: [{ name: CLUSTER_DEFAULT_RECEIVER }, ...(spec.receivers ?? []).map((r) => ({ name: r.name }))],
    inhibit_rules: (spec.inhibitRules ?? []).map((i) => ({
      source_matchers: [ns, ...(i.sourceMatch ?? []).map(matcherText)],
      target_matchers: [ns, ...(i.targetMatch ?? []).map(matcherText)],
      ...(i.equal ? { equal: i.equal } : {}),
    })),
  };
}

/**
 * The route cases of standalone mode for alerts carrying `namespace` (the heartbeat's aside: its
 * route is not part of operator mode), and an alert of another namespace, which the config must not claim.
 */
export function operatorRouteCases(namespace: string): RouteCase[] {
  const cases = routeCases()
    .filter((c) => !c.expected.includes(RECEIVERS.heartbeat))
    .map((c) => ({ ...c, labels: { ...c.labels, namespace } }));
  const other = cases[0];
  return [
    ...cases,
    {
      name: `${other.name}, from another namespace`,
      labels: { ...other.labels, namespace: `not-${namespace}` },
      expected: [CLUSTER_DEFAULT_RECEIVER as never],
    },
  ];
}

/** Every `{name, key}` Secret reference under `value`. */
function secretRefs(
  value: unknown,
  out: Array<{ name: unknown; key: string }> = [],
): Array<{ name: unknown; key: string }> {
  if (Array.isArray(value)) for (const v of value) secretRefs(v, out);
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.key === 'string' && Object.keys(o).every((k) => k === 'key' || k === 'name' || k === 'optional'))
      out.push({ name: o.name, key: o.key });
    else for (const v of Object.values(o)) secretRefs(v, out);
  }
  return out;
}

/** What the ServiceMonitor and AlertmanagerConfig must say, beyond their schemas. */
export function operatorResourceProblems(
  manifests: readonly Manifest[],
  r: OperatorResources,
  names: StackNames,
): string[] {
  const problems: string[] = [];
  const sm = r.serviceMonitor.spec as {
    selector?: { matchLabels?: Record<string, string> };
    endpoints?: Array<{
      port?: string;
      path?: string;
      relabelings?: Array<{ targetLabel?: string; replacement?: string; action?: string; regex?: string }>;
    }>;
  };
  const services = manifests.filter((m) => {
    if (m.kind !== 'Service') return false;
    const labels = m.metadata.labels ?? {};
    return Object.entries(sm.selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  });
  const backend = services.find((s) => s.metadata.name === names.backend);
  if (!backend) problems.push(`ServiceMonitor selects no Service ${names.backend}`);
  const ep = sm.endpoints ?? [];
  if (ep.length !== 1) problems.push(`ServiceMonitor: expected one endpoint, found ${ep.length}`);
  for (const e of ep) {
    if (e.path !== PATHS.metrics) problems.push(`ServiceMonitor: path ${e.path}, not ${PATHS.metrics}`);
    const ports = ((backend?.spec ?? {}) as { ports?: Array<{ name?: string }> }).ports ?? [];
    if (backend && !ports.some((p) => p.name === e.port))
      problems.push(`ServiceMonitor: port ${e.port} is not a port of Service ${names.backend}`);
    const rl = e.relabelings ?? [];
    if (!rl.some((x) => x.targetLabel === 'job' && x.replacement === SCRAPE_JOB))
      problems.push(`ServiceMonitor: no relabeling sets job="${SCRAPE_JOB}"`);
    if (services.length > 1 && !rl.some((x) => x.action === 'keep' && x.regex === names.backend)) {
      problems.push(
        `ServiceMonitor: selects ${services.length} Services and keeps all of them: every pod would be scraped twice`,
      );
    }
  }
  const keys = new Set<string>(Object.values(SECRETS.alertmanager.keys));
  for (const ref of secretRefs(r.alertmanagerConfig.spec)) {
    if (ref.name !== names.alertmanagerSecret || !keys.has(ref.key))
      problems.push(
        `AlertmanagerConfig: secret reference ${String(ref.name)}/${ref.key} is not a key of Secret ${names.alertmanagerSecret}`,
      );
  }
  const receivers = ((r.alertmanagerConfig.spec as CrdSpec).receivers ?? []).map((x) => x.name);
  const want = Object.values(RECEIVERS).filter((n) => n !== RECEIVERS.heartbeat);
  if (!isDeepStrictEqual([...receivers].sort(), [...want].sort()))
    problems.push(`AlertmanagerConfig: receivers ${receivers.join(', ')}, expected ${want.join(', ')}`);
  return problems;
}

/**
 * Operator mode's checks beyond the schemas: the three resources exist and say what they must,
 * the PrometheusRule holds the groups the settings generate and passes `promtool check rules`
 * and the generated unit tests, and the AlertmanagerConfig, nested as the operator nests it,
 * passes `amtool check-config` and routes every case as standalone mode does.
 */
export function validateOperator(manifests: readonly Manifest[], settings: Settings, tools: ToolRunner): CheckResult[] {
  const names = stackNames(settings.deploy.namePrefix);
  let r: OperatorResources;
  try {
    r = operatorResources(manifests);
  } catch (e) {
    return [problemsCheck('operator resources', [e instanceof Error ? e.message : String(e)])];
  }
  const results: CheckResult[] = [];
  const standalone = manifests.filter(
    (m) => m.kind === 'Deployment' && [names.prometheus, names.alertmanager].includes(m.metadata.name),
  );
  results.push(
    problemsCheck('operator resources', [
      ...operatorResourceProblems(manifests, r, names),
      ...standalone.map((m) => `operator mode still deploys ${m.kind}/${m.metadata.name}`),
    ]),
  );
  const rules = ruleFileOf(r.prometheusRule);
  const expected = alertRules(settings);
  const rulesMatch = isDeepStrictEqual(JSON.parse(JSON.stringify(rules)), JSON.parse(JSON.stringify(expected)));
  results.push(
    problemsCheck(
      'PrometheusRule groups match the settings',
      rulesMatch ? [] : ['the PrometheusRule differs from the rule groups these settings generate'],
    ),
  );
  const ws = workspace();
  try {
    const text = toYaml(rules);
    results.push({ ...checkRules(tools, ws, text), check: 'promtool check rules (PrometheusRule groups)' });
    if (rulesMatch) {
      const tests = ruleUnitTests(settings, rules);
      const t = testRules(tools, ws, text, dump(tests.file, { lineWidth: -1 }));
      results.push({
        ...t,
        check: `promtool test rules on the PrometheusRule groups (${tests.file.tests.length} tests)`,
      });
    }
    const amText = toYaml(operatorRoutingConfig(r.alertmanagerConfig, settings.deploy.namespace));
    const am = checkAlertmanagerConfig(tools, ws, amText);
    results.push({ ...am, check: 'amtool check-config (AlertmanagerConfig routing, nested as the operator does)' });
    if (am.ok) {
      const cases = operatorRouteCases(settings.deploy.namespace);
      const path = ws.write(ALERTMANAGER_FILE, amText);
      results.push(
        problemsCheck(
          `amtool config routes test, AlertmanagerConfig (${cases.length} cases)`,
          routeCaseProblems(tools, path, cases),
        ),
      );
    }
  } finally {
    ws.dispose();
  }
  return results;
}
