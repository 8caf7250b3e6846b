import type { ChatChannels, EmailRecipients, Settings } from '../../configs';
import { ALERTS } from './alert-names';
import { alertmanagerSecretFile } from './names';
import {
  HEARTBEAT_ALERT,
  RECEIVER_NAMES,
  RECEIVERS,
  ROUTING_TABLE,
  type ReceiverName,
  type RoutingRow,
} from './routing';
import { MONITORING_COMPONENT } from './rule-types';
import { SERVICE_NAME } from '../../contract';

/**
 * A child route: every child of the table's rows continues, so an alert reaches every matching
 * row; the heartbeat's route comes first and stops there.
 */
export interface ChildRoute {
  readonly receiver: ReceiverName;
  readonly matchers: readonly string[];
  readonly continue: boolean;
  readonly group_wait?: string;
  readonly group_interval?: string;
  readonly repeat_interval?: string;
}

/** The root route. */
export interface RootRoute {
  readonly receiver: ReceiverName;
  readonly group_by: readonly string[];
  readonly group_wait: string;
  readonly group_interval: string;
  readonly repeat_interval: string;
  readonly routes: readonly ChildRoute[];
}

/** An inhibition rule. */
export interface InhibitRule {
  readonly source_matchers: readonly string[];
  readonly target_matchers: readonly string[];
  readonly equal?: readonly string[];
}

/** Chat (Slack-compatible) destination; the URL comes from `global.slack_api_url_file`. */
export interface SlackConfig {
  readonly channel: string;
  readonly send_resolved: boolean;
  readonly text: string;
}

/** E-mail destination. */
export interface EmailConfig {
  readonly to: string;
  readonly send_resolved: boolean;
}

/** Generic webhook destination. */
export interface WebhookConfig {
  readonly url: string;
  readonly send_resolved: boolean;
  readonly http_config?: { readonly authorization: { readonly type: 'Bearer'; readonly credentials_file: string } };
}

/** Incident-service (PagerDuty Events API v2) destination. */
export interface PagerdutyConfig {
  readonly routing_key_file: string;
  readonly send_resolved: boolean;
}

/** One receiver; a receiver without destinations is valid (it drops what it gets). */
export interface Receiver {
  readonly name: ReceiverName;
  readonly slack_configs?: readonly SlackConfig[];
  readonly email_configs?: readonly EmailConfig[];
  readonly webhook_configs?: readonly WebhookConfig[];
  readonly pagerduty_configs?: readonly PagerdutyConfig[];
}

/** `alertmanager.yml` as this stack writes it (Alertmanager 0.25). */
export interface AlertmanagerConfig {
  readonly global: {
    readonly resolve_timeout: string;
    readonly smtp_smarthost: string;
    readonly smtp_from: string;
    readonly smtp_require_tls: boolean;
    readonly smtp_auth_username?: string;
    readonly smtp_auth_password_file?: string;
    readonly slack_api_url_file?: string;
  };
  readonly route: RootRoute;
  readonly inhibit_rules: readonly InhibitRule[];
  readonly receivers: readonly Receiver[];
}

/** The destinations of one receiver (spec §6.2), by the settings that name them. */
interface Destinations {
  readonly chat: keyof ChatChannels;
  readonly email?: keyof EmailRecipients;
  /** The generic webhook (critical alerts). */
  readonly webhook?: boolean;
  /** The incident service (paging). */
  readonly incident?: boolean;
  /** @default true */
  readonly sendResolved?: boolean;
}

const DESTINATIONS: Readonly<Record<ReceiverName, Destinations>> = {
  [RECEIVERS.default]: { chat: 'general', email: 'general' },
  [RECEIVERS.critical]: { chat: 'critical', email: 'critical', webhook: true },
  [RECEIVERS.onCall]: { chat: 'oncall', email: 'oncall', incident: true },
  [RECEIVERS.warning]: { chat: 'warning', email: 'warning' },
  [RECEIVERS.info]: { chat: 'info', sendResolved: false },
  [RECEIVERS.backendTeam]: { chat: 'backend', email: 'backendTeam' },
  [RECEIVERS.errorRateAlerts]: { chat: 'errors', email: 'errors' },
  // Its only destination is HEARTBEAT_URL, added in `heartbeatReceiver`.
  [RECEIVERS.heartbeat]: { chat: 'general' },
};

/** Message body: the summary in bold, then the description, per alert (the title stays Alertmanager's default). */
const CHAT_TEXT = '{{ range .Alerts }}*{{ .Annotations.summary }}*\n{{ .Annotations.description }}\n{{ end }}';

/** `name="value"` in Alertmanager matcher syntax. */
export function equalMatcher(name: string, value: string): string {
  return `${name}=${JSON.stringify(value)}`;
}

/** `name!="value"`. */
export function notEqualMatcher(name: string, value: string): string {
  return `${name}!=${JSON.stringify(value)}`;
}

/**
 * The root's child routes for a routing table: one `continue: true` route per row and receiver.
 * A receiver an earlier row already reaches gets that row's match negated, so no alert reaches a
 * receiver twice (a critical `BackendDown` pages on-call once, not twice).
 */
export function childRoutes(table: readonly RoutingRow[] = ROUTING_TABLE): ChildRoute[] {
  const routes: ChildRoute[] = [];
  table.forEach((row, i) => {
    for (const receiver of row.receivers) {
      const exclusions = table
        .slice(0, i)
        .filter((earlier) => earlier.receivers.includes(receiver))
        .map((earlier) => {
          const entries = Object.entries(earlier.match);
          if (entries.length !== 1) {
            throw new Error(
              `cannot negate the multi-label match ${JSON.stringify(earlier.match)} for receiver ${receiver}`,
            );
          }
          return notEqualMatcher(entries[0][0], entries[0][1]);
        });
      const matchers = [...Object.entries(row.match).map(([k, v]) => equalMatcher(k, v)), ...exclusions];
      routes.push({ receiver, matchers, continue: true });
    }
  });
  return routes;
}

/** The heartbeat's route: first, without `continue`, re-sent every `HEARTBEAT_INTERVAL`. */
export function heartbeatRoute(settings: Settings): ChildRoute {
  return {
    receiver: RECEIVERS.heartbeat,
    matchers: [equalMatcher('alertname', HEARTBEAT_ALERT)],
    continue: false,
    group_wait: '0s',
    group_interval: '1m',
    repeat_interval: settings.alerting.heartbeatInterval,
  };
}

/**
 * Inhibition: critical silences warning and info, warning silences info, `BackendDown` the rest
 * of the backend's alerts. The heartbeat (severity `none`) is never a source or a target, and
 * the pipeline's alerts (`component="monitoring"`) are not silenced by a backend outage.
 */
export function inhibitRules(settings: Settings): InhibitRule[] {
  const equal = settings.alerting.inhibitEqual;
  return [
    { source_matchers: [equalMatcher('severity', 'critical')], target_matchers: ['severity=~"warning|info"'], equal },
    {
      source_matchers: [equalMatcher('severity', 'warning')],
      target_matchers: [equalMatcher('severity', 'info')],
      equal,
    },
    {
      source_matchers: [equalMatcher('alertname', ALERTS.backendDown), equalMatcher('service', SERVICE_NAME)],
      target_matchers: [
        equalMatcher('service', SERVICE_NAME),
        notEqualMatcher('alertname', ALERTS.backendDown),
        notEqualMatcher('component', MONITORING_COMPONENT),
      ],
    },
  ];
}

/** Which destinations are configured at synth time: secrets are checked for presence, never read. */
export interface EnabledDestinations {
  /** `CHAT_WEBHOOK_URL` is set. */
  readonly chat: boolean;
  /** `SMTP_PASSWORD` is set: authenticate as `SMTP_USER`. */
  readonly smtpAuth: boolean;
  /** `WEBHOOK_URL` is set (not a secret: Alertmanager 0.25 has no `url_file`). */
  readonly webhookUrl?: string;
  /** `WEBHOOK_BEARER_TOKEN` is set. */
  readonly webhookAuth: boolean;
  /** `INCIDENT_SERVICE_KEY` is set. */
  readonly incident: boolean;
}

/** The destinations `settings` enables. */
export function enabledDestinations(settings: Settings): EnabledDestinations {
  const a = settings.alerting;
  return {
    chat: a.chatWebhookUrl !== undefined,
    smtpAuth: a.smtpPassword !== undefined,
    webhookUrl: a.webhookUrl,
    webhookAuth: a.webhookBearerToken !== undefined,
    incident: a.incidentServiceKey !== undefined,
  };
}

/** The heartbeat receiver: a webhook to `HEARTBEAT_URL`, or no destination when it is unset. */
export function heartbeatReceiver(settings: Settings): Receiver {
  const url = settings.alerting.heartbeatUrl;
  return url
    ? { name: RECEIVERS.heartbeat, webhook_configs: [{ url, send_resolved: false }] }
    : { name: RECEIVERS.heartbeat };
}

function receiver(name: ReceiverName, settings: Settings, on: EnabledDestinations): Receiver {
  if (name === RECEIVERS.heartbeat) return heartbeatReceiver(settings);
  const d = DESTINATIONS[name];
  const sendResolved = d.sendResolved ?? true;
  const out: {
    name: ReceiverName;
    slack_configs?: SlackConfig[];
    email_configs?: EmailConfig[];
    webhook_configs?: WebhookConfig[];
    pagerduty_configs?: PagerdutyConfig[];
  } = { name };
  if (on.chat) {
    out.slack_configs = [
      { channel: settings.alerting.chatChannels[d.chat], send_resolved: sendResolved, text: CHAT_TEXT },
    ];
  }
  if (d.email) out.email_configs = [{ to: settings.alerting.emails[d.email], send_resolved: sendResolved }];
  if (d.webhook && on.webhookUrl) {
    out.webhook_configs = [
      {
        url: on.webhookUrl,
        send_resolved: sendResolved,
        ...(on.webhookAuth
          ? {
              http_config: {
                authorization: { type: 'Bearer', credentials_file: alertmanagerSecretFile('webhookBearerToken') },
              },
            }
          : {}),
      },
    ];
  }
  if (d.incident && on.incident) {
    out.pagerduty_configs = [
      { routing_key_file: alertmanagerSecretFile('incidentServiceKey'), send_resolved: sendResolved },
    ];
  }
  return out;
}

/**
 * `alertmanager.yml` from settings: receivers with the destinations of spec §6.2, the heartbeat's
 * own route, then the routing table compiled to `continue: true` routes, grouping and inhibition. Every secret is a
 * `*_file` path into the mounted Secret; no secret value is ever part of the document.
 */
export function alertmanagerConfig(settings: Settings): AlertmanagerConfig {
  const a = settings.alerting;
  const on = enabledDestinations(settings);
  return {
    global: {
      resolve_timeout: '5m',
      smtp_smarthost: `${a.smtpHost}:${a.smtpPort}`,
      smtp_from: a.smtpFrom,
      smtp_require_tls: true,
      ...(on.smtpAuth
        ? { smtp_auth_username: a.smtpUser, smtp_auth_password_file: alertmanagerSecretFile('smtpPassword') }
        : {}),
      ...(on.chat ? { slack_api_url_file: alertmanagerSecretFile('chatWebhookUrl') } : {}),
    },
    route: {
      receiver: RECEIVERS.default,
      group_by: a.groupBy,
      group_wait: a.groupWait,
      group_interval: a.groupInterval,
      repeat_interval: a.repeatInterval,
      routes: [heartbeatRoute(settings), ...childRoutes()],
    },
    inhibit_rules: inhibitRules(settings),
    receivers: RECEIVER_NAMES.map((name) => receiver(name, settings, on)),
  };
}
