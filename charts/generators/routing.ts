import { ALERTS } from './alert-names';
import { SERVICE_NAME } from '../../contract';

/** Receiver names (spec §6.2 and the list). */
export const RECEIVERS = {
  default: 'default',
  critical: 'critical',
  onCall: 'on-call',
  warning: 'warning',
  info: 'info',
  backendTeam: 'backend-team',
  errorRateAlerts: 'error-rate-alerts',
  /** The always-firing Watchdog only, to an external dead man's switch (`HEARTBEAT_URL`). */
  heartbeat: 'heartbeat',
} as const;

/** One receiver's name. */
export type ReceiverName = (typeof RECEIVERS)[keyof typeof RECEIVERS];

/** Every receiver, in config order. */
export const RECEIVER_NAMES: readonly ReceiverName[] = Object.values(RECEIVERS);

/**
 * The heartbeat goes to its own receiver and nowhere else: ahead of the table, without `continue`,
 * so it never reaches a person and no severity row sees it.
 */
export const HEARTBEAT_ALERT = ALERTS.watchdog;

/** One row of spec §6.2: an alert carrying every label of `match` goes to every receiver listed. */
export interface RoutingRow {
  /** Label equalities, all required. */
  readonly match: Readonly<Record<string, string>>;
  readonly receivers: readonly ReceiverName[];
}

/**
 * Spec §6.2 as data, in table order. An alert reaches every row it matches; `default` only when
 * it matches none. `on-call` gets every critical alert and every `BackendDown`.
 */
export const ROUTING_TABLE: readonly RoutingRow[] = [
  { match: { severity: 'critical' }, receivers: [RECEIVERS.critical, RECEIVERS.onCall] },
  { match: { alertname: ALERTS.backendDown }, receivers: [RECEIVERS.onCall] },
  { match: { severity: 'warning' }, receivers: [RECEIVERS.warning] },
  { match: { severity: 'info' }, receivers: [RECEIVERS.info] },
  { match: { service: SERVICE_NAME }, receivers: [RECEIVERS.backendTeam] },
  { match: { alertname: ALERTS.highErrorRate }, receivers: [RECEIVERS.errorRateAlerts] },
];

function matches(row: RoutingRow, labels: Readonly<Record<string, string>>): boolean {
  return Object.entries(row.match).every(([k, v]) => labels[k] === v);
}

/**
 * The receivers an alert with `labels` must reach, each once, in table order: the reference the
 * generated route tree is tested against (`amtool config routes test`).
 */
export function expectedReceivers(
  labels: Readonly<Record<string, string>>,
  table: readonly RoutingRow[] = ROUTING_TABLE,
): ReceiverName[] {
  if (labels.alertname === HEARTBEAT_ALERT) return [RECEIVERS.heartbeat];
  const out: ReceiverName[] = [];
  for (const row of table) {
    if (!matches(row, labels)) continue;
    for (const r of row.receivers) if (!out.includes(r)) out.push(r);
  }
  return out.length ? out : [RECEIVERS.default];
}
