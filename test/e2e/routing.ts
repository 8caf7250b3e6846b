/** What the e2e test knows about notifications: the routes of spec §6.2 and how to read deliveries. */
import { load } from 'js-yaml';
import { DEFAULT_ALERTING } from '../../configs';
import { ALERTS } from '../../charts/generators/alert-names';
import { RECEIVER_PATHS, type LocalStack } from '../../tools/harness/local-stack';
import { waitFor } from '../../tools/harness/ports';
import type { Delivery } from '../../tools/harness/webhook-receiver';
import { SERVICE_NAME } from '../../contract';

/** The default chat channels (the e2e synthesizes with default channel settings). */
export const CH = DEFAULT_ALERTING.chatChannels;

/**
 * Spec §6.2 as the test reads it: which chat channels (and whether the generic webhook) an alert
 * with given labels must reach. Written here from the spec, not imported from the generators, so
 * the generated routes are judged against the spec rather than against themselves.
 */
export const ROUTING_ROWS: ReadonlyArray<{ match: Record<string, string>; channels: string[]; webhook?: boolean }> = [
  { match: { severity: 'critical' }, channels: [CH.critical, CH.oncall], webhook: true },
  { match: { alertname: ALERTS.backendDown }, channels: [CH.oncall] },
  { match: { severity: 'warning' }, channels: [CH.warning] },
  { match: { severity: 'info' }, channels: [CH.info] },
  { match: { service: SERVICE_NAME }, channels: [CH.backend] },
  { match: { alertname: ALERTS.highErrorRate }, channels: [CH.errors] },
];

/** Channels (sorted, each once) and webhook an alert with `labels` must reach per §6.2. */
export function expectedRoutes(labels: Record<string, string>): { channels: string[]; webhook: boolean } {
  const rows = ROUTING_ROWS.filter((r) => Object.entries(r.match).every(([k, v]) => labels[k] === v));
  if (!rows.length) return { channels: [CH.general], webhook: false };
  return { channels: [...new Set(rows.flatMap((r) => r.channels))].sort(), webhook: rows.some((r) => r.webhook) };
}

/** Chat message of Alertmanager's Slack integration (the generated title is `slack.default.title`). */
export interface ChatMessage {
  readonly channel: string;
  readonly status: 'FIRING' | 'RESOLVED';
  /** Words of the title after the status: the group label values, the alert name among them. */
  readonly words: readonly string[];
}

export function chatMessage(d: Delivery): ChatMessage | undefined {
  if (d.path !== RECEIVER_PATHS.chat) return undefined;
  const body = d.body as { channel?: string; attachments?: Array<{ title?: string }> };
  const m = /^\[(FIRING|RESOLVED)(?::\d+)?\]\s+(.*)$/.exec(body.attachments?.[0]?.title ?? '');
  if (!m || !body.channel) return undefined;
  return { channel: body.channel, status: m[1] as ChatMessage['status'], words: m[2].split(/\s+/) };
}

/** Sorted channels that got a chat message with `status` about `alertname`. */
export function channelsFor(stack: LocalStack, alertname: string, status: ChatMessage['status'] = 'FIRING'): string[] {
  const channels = stack.receiver.deliveries
    .map(chatMessage)
    .filter((m): m is ChatMessage => !!m && m.status === status && m.words.includes(alertname))
    .map((m) => m.channel);
  return [...new Set(channels)].sort();
}

/** Generic-webhook deliveries carrying `alertname` with `status` (`firing` | `resolved`). */
export function webhookDeliveries(stack: LocalStack, alertname: string, status = 'firing'): Delivery[] {
  return stack.receiver.deliveries.filter((d) => {
    if (d.path !== RECEIVER_PATHS.webhook) return false;
    const body = d.body as { alerts?: Array<{ status?: string; labels?: Record<string, string> }> };
    return (body.alerts ?? []).some((a) => a.labels?.alertname === alertname && a.status === status);
  });
}

/** Chat channels and webhook that got `alertname` firing so far. */
export function routesSoFar(stack: LocalStack, alertname: string): { channels: string[]; webhook: boolean } {
  return { channels: channelsFor(stack, alertname), webhook: webhookDeliveries(stack, alertname).length > 0 };
}

/** Waits until every expected channel (and the webhook if expected) got `alertname` firing. */
export async function waitForRoutes(
  stack: LocalStack,
  alertname: string,
  expected: { channels: string[]; webhook: boolean },
): Promise<void> {
  await waitFor(
    `${alertname} on ${expected.channels.join(', ')}${expected.webhook ? ' and the webhook' : ''}`,
    () => {
      const got = routesSoFar(stack, alertname);
      if (expected.channels.some((c) => !got.channels.includes(c)) || (expected.webhook && !got.webhook)) {
        throw new Error(`so far: ${got.channels.join(', ') || 'no channel'}; webhook: ${got.webhook}`);
      }
      return true;
    },
    { timeoutMs: 30000 },
  );
}

/** What a chat or webhook configuration of alertmanager.yml holds that the test reads. */
interface DestinationConfig {
  readonly channel?: string;
  readonly url?: string;
  readonly send_resolved?: boolean;
}

/**
 * The chat channels and the generic webhook of `receivers` in the alertmanager.yml Alertmanager
 * runs; with `status` `RESOLVED`, only the destinations that send resolved notifications
 * (`send_resolved`; unset, Alertmanager's default: false for Slack, true for webhooks).
 */
export function destinationsOf(
  stack: LocalStack,
  receivers: readonly string[],
  status: ChatMessage['status'] = 'FIRING',
): { channels: string[]; webhook: boolean } {
  const config = load(stack.documents.alertmanagerConfig) as {
    receivers: Array<{ name: string; slack_configs?: DestinationConfig[]; webhook_configs?: DestinationConfig[] }>;
  };
  const sends = (d: DestinationConfig, byDefault: boolean) => status === 'FIRING' || (d.send_resolved ?? byDefault);
  const used = config.receivers.filter((r) => receivers.includes(r.name));
  if (used.length !== new Set(receivers).size)
    throw new Error(`receivers not in alertmanager.yml: ${receivers.join(', ')}`);
  const channels = used.flatMap((r) => (r.slack_configs ?? []).filter((d) => sends(d, false)).map((d) => d.channel!));
  const webhook = used.some((r) =>
    (r.webhook_configs ?? []).some((d) => sends(d, true) && new URL(d.url!).pathname === RECEIVER_PATHS.webhook),
  );
  return { channels: [...new Set(channels)].sort(), webhook };
}

/**
 * The receivers Alertmanager routes the alerts named `alertname` it holds to (`receivers` of
 * `GET /api/v2/alerts`: its own match of the labels against the routing tree it runs).
 */
export async function receiversOf(stack: LocalStack, alertname: string): Promise<string[]> {
  await stack.alertmanager.waitForAlert(alertname);
  const held = (await stack.alertmanager.alerts()).filter((a) => a.labels.alertname === alertname);
  return [...new Set(held.flatMap((a) => a.receivers.map((r) => r.name)))].sort();
}

/**
 * Where Alertmanager sends `alertname`, by its own account: the destinations of the receivers it
 * routes the alert to. Every notification of the alert comes from an aggregation group of one of
 * these receivers, so once the expected routes were delivered and this equals them, no other route
 * can deliver it later: the check that no wrong route was taken needs no wait (it waited 2.5 s, a
 * few group_wait periods, for a delivery that would have shown a wrong route).
 */
export async function routedTo(
  stack: LocalStack,
  alertname: string,
  status: ChatMessage['status'] = 'FIRING',
): Promise<{ channels: string[]; webhook: boolean }> {
  return destinationsOf(stack, await receiversOf(stack, alertname), status);
}

/** The texts of the chat messages with `status` about `alertname` (each alert's summary and description). */
export function chatTexts(stack: LocalStack, alertname: string, status: ChatMessage['status'] = 'FIRING'): string[] {
  return stack.receiver.deliveries
    .filter((d) => {
      const m = chatMessage(d);
      return !!m && m.status === status && m.words.includes(alertname);
    })
    .map((d) => (d.body as { attachments?: Array<{ text?: string }> }).attachments?.[0]?.text ?? '');
}
