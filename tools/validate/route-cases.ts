import { ALERTS } from '../../charts/generators/alert-names';
import { expectedReceivers, RECEIVERS, ROUTING_TABLE, type ReceiverName } from '../../charts/generators/routing';
import { SERVICE_NAME } from '../../contract';

/** One `amtool config routes test` case. */
export interface RouteCase {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Receivers in route order, each once. */
  readonly expected: readonly ReceiverName[];
}

/** An alert name no routing row mentions. */
const OTHER_ALERT = 'SomeOtherAlert';
/** A service no routing row mentions. */
const OTHER_SERVICE = 'some-other-service';

/**
 * The combinations the issue names, with their receivers written out by hand (not derived from
 * the routing table), so the table, the compiled routes and Alertmanager are checked against an
 * independent statement of spec §6.2.
 */
export const NAMED_ROUTE_CASES: readonly RouteCase[] = [
  {
    name: 'a critical BackendDown of this service',
    labels: { alertname: ALERTS.backendDown, severity: 'critical', service: SERVICE_NAME },
    expected: [RECEIVERS.critical, RECEIVERS.onCall, RECEIVERS.backendTeam],
  },
  {
    name: 'a warning HighErrorRate of this service',
    labels: { alertname: ALERTS.highErrorRate, severity: 'warning', service: SERVICE_NAME },
    expected: [RECEIVERS.warning, RECEIVERS.backendTeam, RECEIVERS.errorRateAlerts],
  },
  {
    name: 'an alert that matches nothing',
    labels: { alertname: OTHER_ALERT, severity: 'none', service: OTHER_SERVICE },
    expected: [RECEIVERS.default],
  },
  {
    name: 'a BackendDown that is not critical still pages on-call',
    labels: { alertname: ALERTS.backendDown, severity: 'warning', service: OTHER_SERVICE },
    expected: [RECEIVERS.onCall, RECEIVERS.warning],
  },
  {
    name: 'the heartbeat reaches its own receiver and no person',
    labels: { alertname: ALERTS.watchdog, severity: 'none', service: SERVICE_NAME, component: 'monitoring' },
    expected: [RECEIVERS.heartbeat],
  },
  {
    name: 'a warning about the pipeline goes where warnings of this service go',
    labels: {
      alertname: ALERTS.alertmanagerFailedToSend,
      severity: 'warning',
      service: SERVICE_NAME,
      component: 'monitoring',
    },
    expected: [RECEIVERS.warning, RECEIVERS.backendTeam],
  },
  {
    name: 'a warning that the DATA_DIR store cannot compact goes where warnings of this service go',
    labels: {
      alertname: ALERTS.contentCompactionFailing,
      severity: 'warning',
      service: SERVICE_NAME,
      instance: '10.0.0.1:8080',
    },
    expected: [RECEIVERS.warning, RECEIVERS.backendTeam],
  },
  {
    name: 'a warning that the DATA_DIR store refuses writes (a full disk) goes where warnings of this service go',
    labels: {
      alertname: ALERTS.contentWritesRefused,
      severity: 'warning',
      service: SERVICE_NAME,
      instance: '10.0.0.1:8080',
      state: 'disk_full',
    },
    expected: [RECEIVERS.warning, RECEIVERS.backendTeam],
  },
  {
    name: 'a warning that the kvstore does not confirm content writes goes where warnings of this service go',
    labels: {
      alertname: ALERTS.kvstoreWritesUnconfirmed,
      severity: 'warning',
      service: SERVICE_NAME,
      instance: '10.0.0.1:8080',
      state: 'no_replica',
    },
    expected: [RECEIVERS.warning, RECEIVERS.backendTeam],
  },
  {
    name: 'a warning that the kvstore evicts keys goes where warnings of this service go',
    labels: { alertname: ALERTS.kvstoreEvictingKeys, severity: 'warning', service: SERVICE_NAME, store: 'kvstore' },
    expected: [RECEIVERS.warning, RECEIVERS.backendTeam],
  },
  {
    name: 'an info alert of this service',
    labels: { alertname: OTHER_ALERT, severity: 'info', service: SERVICE_NAME },
    expected: [RECEIVERS.info, RECEIVERS.backendTeam],
  },
];

/** One case per row of spec §6.2: an alert carrying only that row's labels. */
export function rowRouteCases(): RouteCase[] {
  return ROUTING_TABLE.map((row) => {
    const labels = { alertname: OTHER_ALERT, ...row.match };
    return { name: `row ${JSON.stringify(row.match)}`, labels, expected: expectedReceivers(labels) };
  });
}

/**
 * Every combination of the label values routing looks at (alert name × severity × service),
 * with the receivers the table gives: 3 × 4 × 2 = 24 alerts.
 */
export function combinationRouteCases(): RouteCase[] {
  const cases: RouteCase[] = [];
  for (const alertname of [ALERTS.backendDown, ALERTS.highErrorRate, OTHER_ALERT]) {
    for (const severity of ['critical', 'warning', 'info', 'none']) {
      for (const service of [SERVICE_NAME, OTHER_SERVICE]) {
        const labels = { alertname, severity, service };
        cases.push({ name: `${alertname} ${severity} ${service}`, labels, expected: expectedReceivers(labels) });
      }
    }
  }
  return cases;
}

/** All route cases: named, per row, every combination. */
export function routeCases(): RouteCase[] {
  return [...NAMED_ROUTE_CASES, ...rowRouteCases(), ...combinationRouteCases()];
}
