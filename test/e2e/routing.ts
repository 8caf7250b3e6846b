/** What the e2e test knows about notifications: the routes of spec §6.2 and how to read deliveries. */
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

/** Every route's group flushes after the same group_wait: a wrong extra route shows within this. */
export const settle = () => new Promise((r) => setTimeout(r, 2500));
