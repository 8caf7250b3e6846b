/**
 * `make test-alert`: posts the test alert of spec §6.3 to `ALERTMANAGER_URL`, at
 * `/api/v1/alerts`, falling back to `/api/v2/alerts` on servers that removed v1 (0.27+).
 *
 *   kubectl -n svc-ai-search port-forward svc/alertmanager 9093 &
 *   ALERTMANAGER_URL=http://localhost:9093 make test-alert
 *
 * Optional: TEST_ALERT_SEVERITY (critical, warning, info; default warning), TEST_ALERT_NAME.
 */
import { testAlert, type PostableAlert, type Severity } from '../charts';

/** Statuses with which a server says "no such API version". */
const API_GONE = new Set([404, 405, 410]);

/** Where the alert went. */
export interface PostResult {
  readonly endpoint: string;
  readonly status: number;
}

/**
 * POSTs `alerts` to the Alertmanager at `baseUrl`: v1 first (spec §6.3), v2 when v1 is gone.
 * Throws with the server's answer on any other failure.
 */
export async function postAlerts(
  baseUrl: string,
  alerts: readonly PostableAlert[],
  fetchImpl: typeof fetch = fetch,
): Promise<PostResult> {
  const base = baseUrl.replace(/\/+$/, '');
  let last: { endpoint: string; status: number; body: string } | undefined;
  for (const version of ['v1', 'v2']) {
    const endpoint = `${base}/api/${version}/alerts`;
    const res = await fetchImpl(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(alerts),
    });
    if (res.ok) return { endpoint, status: res.status };
    last = { endpoint, status: res.status, body: (await res.text()).trim() };
    if (!API_GONE.has(res.status)) break;
  }
  throw new Error(`POST ${last?.endpoint} answered ${last?.status}: ${last?.body}`);
}

const SEVERITIES: readonly Severity[] = ['critical', 'warning', 'info'];

/** Reads the options from the environment; throws with what to set. */
export function testAlertRequest(env: NodeJS.ProcessEnv): { url: string; alerts: PostableAlert[] } {
  const url = env.ALERTMANAGER_URL?.trim();
  if (!url) {
    throw new Error(
      'set ALERTMANAGER_URL, e.g. `kubectl -n svc-ai-search port-forward svc/alertmanager 9093` then ALERTMANAGER_URL=http://localhost:9093',
    );
  }
  try {
    new URL(url);
  } catch {
    throw new Error(`ALERTMANAGER_URL=${JSON.stringify(url)} is not a URL such as http://localhost:9093`);
  }
  const severity = (env.TEST_ALERT_SEVERITY?.trim().toLowerCase() || 'warning') as Severity;
  if (!SEVERITIES.includes(severity)) throw new Error(`TEST_ALERT_SEVERITY must be one of ${SEVERITIES.join(', ')}`);
  return { url, alerts: testAlert({ severity, alertname: env.TEST_ALERT_NAME?.trim() || undefined }) };
}

async function main(): Promise<void> {
  const { url, alerts } = testAlertRequest(process.env);
  const r = await postAlerts(url, alerts);
  process.stdout.write(
    `posted ${alerts[0].labels.alertname} (severity ${alerts[0].labels.severity}) to ${r.endpoint}: ${r.status}\n`,
  );
}

if (require.main === module) {
  main().catch((e: unknown) => {
    process.stderr.write(`test-alert: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
