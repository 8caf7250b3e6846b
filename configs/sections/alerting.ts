import { duration, email, int, list, str, url } from '../parsers';
import { variable, type VariableSpec } from '../variables';

/** Chat channels per routing row of spec §6.2. */
export interface ChatChannels {
  /** @default '#alerts' */ readonly general: string;
  /** @default '#alerts-critical' */ readonly critical: string;
  /** @default '#alerts-warning' */ readonly warning: string;
  /** @default '#alerts-info' */ readonly info: string;
  /** @default '#on-call' */ readonly oncall: string;
  /** @default '#backend' */ readonly backend: string;
  /** @default '#errors' */ readonly errors: string;
}

/** E-mail recipients per routing row of spec §6.2. */
export interface EmailRecipients {
  /** @default 'alerts@example.com' */ readonly general: string;
  /** @default 'critical@example.com' */ readonly critical: string;
  /** @default 'warnings@example.com' */ readonly warning: string;
  /** @default 'errors@example.com' */ readonly errors: string;
  /** @default 'oncall@example.com' */ readonly oncall: string;
  /** @default 'backend-team@example.com' */ readonly backendTeam: string;
}

/** Alertmanager receivers, routing and grouping. Secrets are read from files at run time, never emitted. */
export interface AlertingSettings {
  /** Chat (Slack-compatible) incoming-webhook URL. Secret: such URLs are credentials. @default undefined */
  readonly chatWebhookUrl?: string;
  readonly chatChannels: ChatChannels;
  /** SMTP smarthost name. @default 'smtp.example.com' */
  readonly smtpHost: string;
  /** SMTP port. @default 587 */
  readonly smtpPort: number;
  /** SMTP user. @default 'alertmanager@example.com' */
  readonly smtpUser: string;
  /** SMTP password. Secret. @default undefined */
  readonly smtpPassword?: string;
  /** Sender address. @default 'alertmanager@example.com' */
  readonly smtpFrom: string;
  readonly emails: EmailRecipients;
  /** Generic webhook receiver URL (critical alerts). @default undefined */
  readonly webhookUrl?: string;
  /** Bearer token for the generic webhook. Secret. @default undefined */
  readonly webhookBearerToken?: string;
  /** Incident-service (PagerDuty-compatible) integration key; enables the incident receiver. Secret. @default undefined */
  readonly incidentServiceKey?: string;
  /** Labels alerts are grouped by. @default ['alertname', 'severity', 'service'] */
  readonly groupBy: readonly string[];
  /** @default '30s' */ readonly groupWait: string;
  /** @default '5m' */ readonly groupInterval: string;
  /** @default '4h' */ readonly repeatInterval: string;
  /** Labels a critical alert and the warning or info alert it silences must share. @default ['alertname', 'service'] */
  readonly inhibitEqual: readonly string[];
  /**
   * Page every alert's `runbook_url` points into, plus `#<alertname in lower case>`.
   * @default 'https://github.com/example/svc-ai-search-backend/blob/main/docs/runbooks.md'
   */
  readonly runbookBaseUrl: string;
  /**
   * Where the always-firing heartbeat (Watchdog) is sent, e.g. a dead man's switch service; unset
   * means the heartbeat receiver has no destination. Not a Secret: Alertmanager 0.25 has no `url_file`.
   * @default undefined
   */
  readonly heartbeatUrl?: string;
  /** How often the heartbeat is re-sent to `heartbeatUrl`. @default '5m' */
  readonly heartbeatInterval: string;
}

export const DEFAULT_ALERTING: AlertingSettings = {
  chatWebhookUrl: undefined,
  chatChannels: {
    general: '#alerts',
    critical: '#alerts-critical',
    warning: '#alerts-warning',
    info: '#alerts-info',
    oncall: '#on-call',
    backend: '#backend',
    errors: '#errors',
  },
  smtpHost: 'smtp.example.com',
  smtpPort: 587,
  smtpUser: 'alertmanager@example.com',
  smtpPassword: undefined,
  smtpFrom: 'alertmanager@example.com',
  emails: {
    general: 'alerts@example.com',
    critical: 'critical@example.com',
    warning: 'warnings@example.com',
    errors: 'errors@example.com',
    oncall: 'oncall@example.com',
    backendTeam: 'backend-team@example.com',
  },
  webhookUrl: undefined,
  webhookBearerToken: undefined,
  incidentServiceKey: undefined,
  groupBy: ['alertname', 'severity', 'service'],
  groupWait: '30s',
  groupInterval: '5m',
  repeatInterval: '4h',
  inhibitEqual: ['alertname', 'service'],
  runbookBaseUrl: 'https://github.com/example/svc-ai-search-backend/blob/main/docs/runbooks.md',
  heartbeatUrl: undefined,
  heartbeatInterval: '5m',
};

const channel = str({ pattern: /^[#@]?[\w.-]+$/, accepted: 'a channel name such as #alerts' });
const LABEL = str({ pattern: /^[a-zA-Z_][a-zA-Z0-9_]*$|^\.\.\.$/, accepted: 'a label name' });
const LABEL_NAME = str({ pattern: /^[a-zA-Z_][a-zA-Z0-9_]*$/, accepted: 'a label name' });

export const ALERTING_VARIABLES: readonly VariableSpec[] = [
  variable(
    'CHAT_WEBHOOK_URL',
    'alerting.chatWebhookUrl',
    url(['http', 'https']),
    'Chat incoming-webhook URL (mounted from a Secret)',
    { secret: true },
  ),
  ...(['general', 'critical', 'warning', 'info', 'oncall', 'backend', 'errors'] as const).map((c) =>
    variable(`CHAT_CHANNEL_${c.toUpperCase()}`, `alerting.chatChannels.${c}`, channel, `Chat channel: ${c}`, {
      synthOnly: true,
    }),
  ),
  variable(
    'SMTP_HOST',
    'alerting.smtpHost',
    str({ pattern: /^[A-Za-z0-9.-]+$/, accepted: 'a host name' }),
    'SMTP host',
    { synthOnly: true },
  ),
  variable('SMTP_PORT', 'alerting.smtpPort', int({ min: 1, max: 65535 }), 'SMTP port', { synthOnly: true }),
  variable('SMTP_USER', 'alerting.smtpUser', str(), 'SMTP user', { synthOnly: true }),
  variable('SMTP_PASSWORD', 'alerting.smtpPassword', str(), 'SMTP password (mounted from a Secret)', {
    secret: true,
    synthOnly: true,
  }),
  variable('SMTP_FROM', 'alerting.smtpFrom', email(), 'Sender address', { synthOnly: true }),
  ...(
    [
      ['GENERAL', 'general'],
      ['CRITICAL', 'critical'],
      ['WARNING', 'warning'],
      ['ERRORS', 'errors'],
      ['ONCALL', 'oncall'],
      ['BACKEND_TEAM', 'backendTeam'],
    ] as const
  ).map(([v, k]) =>
    variable(`EMAIL_${v}`, `alerting.emails.${k}`, email(), `E-mail recipient: ${k}`, { synthOnly: true }),
  ),
  variable(
    'WEBHOOK_URL',
    'alerting.webhookUrl',
    url(['http', 'https']),
    'Generic webhook receiver for critical alerts',
    { synthOnly: true },
  ),
  variable(
    'WEBHOOK_BEARER_TOKEN',
    'alerting.webhookBearerToken',
    str(),
    'Bearer token of the generic webhook (mounted from a Secret)',
    { secret: true, synthOnly: true },
  ),
  variable(
    'INCIDENT_SERVICE_KEY',
    'alerting.incidentServiceKey',
    str(),
    'Incident-service integration key (mounted from a Secret)',
    { secret: true, synthOnly: true },
  ),
  variable('ALERT_GROUP_BY', 'alerting.groupBy', list(LABEL, { minItems: 1 }), 'Alertmanager group_by labels', {
    synthOnly: true,
  }),
  variable('ALERT_GROUP_WAIT', 'alerting.groupWait', duration(), 'Alertmanager group_wait', { synthOnly: true }),
  variable('ALERT_GROUP_INTERVAL', 'alerting.groupInterval', duration(), 'Alertmanager group_interval', {
    synthOnly: true,
  }),
  variable('ALERT_REPEAT_INTERVAL', 'alerting.repeatInterval', duration(), 'Alertmanager repeat_interval', {
    synthOnly: true,
  }),
  variable(
    'RUNBOOK_BASE_URL',
    'alerting.runbookBaseUrl',
    url(['http', 'https']),
    'Runbook page every alert links to (runbook_url = this + #alertname)',
    { synthOnly: true },
  ),
  variable(
    'HEARTBEAT_URL',
    'alerting.heartbeatUrl',
    url(['http', 'https']),
    'Webhook the always-firing heartbeat alert goes to (unset: no destination)',
    { synthOnly: true },
  ),
  variable('HEARTBEAT_INTERVAL', 'alerting.heartbeatInterval', duration(), 'How often the heartbeat is re-sent', {
    synthOnly: true,
  }),
  variable(
    'ALERT_INHIBIT_EQUAL',
    'alerting.inhibitEqual',
    list(LABEL_NAME, { minItems: 1 }),
    'Labels a critical alert shares with the warning/info alerts it silences',
    { synthOnly: true },
  ),
];
