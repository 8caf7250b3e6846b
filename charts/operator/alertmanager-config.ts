import { Construct } from 'constructs';
import {
  AlertmanagerConfig as AlertmanagerConfigResource,
  type AlertmanagerConfigSpecInhibitRulesSourceMatchMatchType as SourceMatchType,
  type AlertmanagerConfigSpecInhibitRulesTargetMatchMatchType as TargetMatchType,
  type AlertmanagerConfigSpecRouteMatchersMatchType as MatchType,
  type AlertmanagerConfigSpecInhibitRules,
  type AlertmanagerConfigSpec,
  type AlertmanagerConfigSpecReceivers,
  type AlertmanagerConfigSpecRoute,
  type AlertmanagerConfigSpecRouteMatchers,
} from '../../imports/alertmanager-config-monitoring.coreos.com';
import type { AlertmanagerConfig, ChildRoute, Receiver } from '../generators/alertmanager-config';
import { SECRETS, stackNames, type StackNames } from '../generators/names';
import { RECEIVERS } from '../generators/routing';
import { operatorLabels } from './operator-labels';

/** A key of the Alertmanager Secret (`SECRETS.alertmanager.keys`). */
type AlertmanagerSecretKey = keyof typeof SECRETS.alertmanager.keys;

/** A `SecretKeySelector` into the stack's Alertmanager Secret: the manifest names the key, never the value. */
export function secretKey(names: StackNames, key: AlertmanagerSecretKey): { name: string; key: string } {
  return { name: names.alertmanagerSecret, key: SECRETS.alertmanager.keys[key] };
}

const MATCHER = /^([A-Za-z_][A-Za-z0-9_]*)(=~|!~|!=|=)("(?:[^"\\]|\\.)*")$/;

/** One Alertmanager matcher (`name="value"`, `name!="value"`, `name=~"a|b"`) taken apart. */
export function parseMatcher(matcher: string): {
  readonly name: string;
  readonly matchType: string;
  readonly value: string;
} {
  const m = MATCHER.exec(matcher);
  if (!m) throw new Error(`cannot translate the matcher ${matcher} to an AlertmanagerConfig matcher`);
  return { name: m[1], matchType: m[2], value: JSON.parse(m[3]) as string };
}

/** A route matcher in the CRD's shape. */
export function crdMatcher(matcher: string): AlertmanagerConfigSpecRouteMatchers {
  const m = parseMatcher(matcher);
  return { ...m, matchType: m.matchType as MatchType };
}

function inhibitRule(i: AlertmanagerConfig['inhibit_rules'][number]): AlertmanagerConfigSpecInhibitRules {
  return {
    sourceMatch: i.source_matchers.map(parseMatcher).map((m) => ({ ...m, matchType: m.matchType as SourceMatchType })),
    targetMatch: i.target_matchers.map(parseMatcher).map((m) => ({ ...m, matchType: m.matchType as TargetMatchType })),
    ...(i.equal ? { equal: [...i.equal] } : {}),
  };
}

function childRoute(r: ChildRoute): AlertmanagerConfigSpecRoute {
  return {
    receiver: r.receiver,
    matchers: r.matchers.map(crdMatcher),
    continue: r.continue,
    ...(r.group_wait ? { groupWait: r.group_wait } : {}),
    ...(r.group_interval ? { groupInterval: r.group_interval } : {}),
    ...(r.repeat_interval ? { repeatInterval: r.repeat_interval } : {}),
  };
}

/**
 * One receiver in the CRD's shape. An AlertmanagerConfig has no `global` section, so the SMTP
 * server goes into each e-mail destination, and every secret `*_file` of the standalone config
 * becomes a `SecretKeySelector` on the same key of the Alertmanager Secret.
 */
function crdReceiver(r: Receiver, doc: AlertmanagerConfig, names: StackNames): AlertmanagerConfigSpecReceivers {
  const g = doc.global;
  return {
    name: r.name,
    ...(r.slack_configs
      ? {
          slackConfigs: r.slack_configs.map((s) => ({
            apiUrl: secretKey(names, 'chatWebhookUrl'),
            channel: s.channel,
            sendResolved: s.send_resolved,
            text: s.text,
          })),
        }
      : {}),
    ...(r.email_configs
      ? {
          emailConfigs: r.email_configs.map((e) => ({
            to: e.to,
            sendResolved: e.send_resolved,
            smarthost: g.smtp_smarthost,
            from: g.smtp_from,
            requireTls: g.smtp_require_tls,
            ...(g.smtp_auth_password_file
              ? { authUsername: g.smtp_auth_username, authPassword: secretKey(names, 'smtpPassword') }
              : {}),
          })),
        }
      : {}),
    ...(r.webhook_configs
      ? {
          webhookConfigs: r.webhook_configs.map((w) => ({
            url: w.url,
            sendResolved: w.send_resolved,
            ...(w.http_config
              ? {
                  httpConfig: {
                    authorization: { type: 'Bearer', credentials: secretKey(names, 'webhookBearerToken') },
                  },
                }
              : {}),
          })),
        }
      : {}),
    ...(r.pagerduty_configs
      ? {
          pagerdutyConfigs: r.pagerduty_configs.map((p) => ({
            routingKey: secretKey(names, 'incidentServiceKey'),
            sendResolved: p.send_resolved,
          })),
        }
      : {}),
  };
}

/**
 * The AlertmanagerConfig spec from the standalone `alertmanager.yml` document (`alertmanagerConfig`),
 * so both modes route alike (spec §6.2): the same receivers, child routes and inhibition. The
 * heartbeat's route and receiver stay out: in operator mode the cluster's own stack runs the
 * Watchdog. The operator adds a `namespace` matcher above this route, which the rules keep.
 */
export function alertmanagerConfigSpec(
  doc: AlertmanagerConfig,
  names: StackNames = stackNames(),
): AlertmanagerConfigSpec {
  const routes = doc.route.routes.filter((r) => r.receiver !== RECEIVERS.heartbeat);
  return {
    route: {
      receiver: doc.route.receiver,
      groupBy: [...doc.route.group_by],
      groupWait: doc.route.group_wait,
      groupInterval: doc.route.group_interval,
      repeatInterval: doc.route.repeat_interval,
      routes: routes.map(childRoute),
    },
    receivers: doc.receivers.filter((r) => r.name !== RECEIVERS.heartbeat).map((r) => crdReceiver(r, doc, names)),
    inhibitRules: doc.inhibit_rules.map(inhibitRule),
  };
}

/** What `BackendAlertmanagerConfig` writes. */
export interface BackendAlertmanagerConfigProps {
  /** The standalone `alertmanager.yml` document (from `alertmanagerConfig`). */
  readonly config: AlertmanagerConfig;
  /** Extra labels the cluster's Alertmanager selects configs by. @default none */
  readonly labels?: Readonly<Record<string, string>>;
  /** Object names of the stack. @default stackNames('') */
  readonly names?: StackNames;
  /** `app.kubernetes.io/version` of the object (the backend's image version). @default none */
  readonly version?: string;
}

/** A prometheus-operator AlertmanagerConfig (`monitoring.coreos.com/v1alpha1`) with the stack's routing. */
export class BackendAlertmanagerConfig extends Construct {
  /** The AlertmanagerConfig object. */
  readonly resource: AlertmanagerConfigResource;

  constructor(scope: Construct, id: string, props: BackendAlertmanagerConfigProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    this.resource = new AlertmanagerConfigResource(this, 'resource', {
      metadata: { name: names.alertmanager, labels: operatorLabels(names, props.labels, props.version) },
      spec: alertmanagerConfigSpec(props.config, names),
    });
  }
}
