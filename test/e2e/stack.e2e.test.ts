/**
 * The whole stack for real (issue 6): what `npx cdk8s synth` generated, running in the real
 * `prometheus` and `prometheus-alertmanager` (Debian 2.42 / 0.25) against the running service
 * and a real `redis-server`, all on loopback, with a webhook receiver standing in for the chat
 * service and the generic webhook.
 *
 * The backend runs as TWO service processes, each its own target of the backend job, as two pods
 * are (the synth gets BACKEND_REPLICAS=2, so the job discovers pods through `dns_sd_configs`).
 *
 * What is rewritten for loopback, and nothing else (tools/harness/manifests.ts, `loopbackDocuments`;
 * the first test checks it):
 * - the backend job's DNS discovery → one static target per service process; the targets
 *   `alertmanager:9093` (alerting and its scrape job) and `localhost:9090` → 127.0.0.1 ports;
 * - `rule_files` and the Alertmanager `*_file` secret paths → temp files (the secrets are test
 *   values: a random bearer token, and the receiver's URL as the chat webhook URL);
 * - SHORTENED INTERVALS for the test: scrape_interval and evaluation_interval 15s → 1s, every
 *   rule's `for` → 2s, group_wait and group_interval → 1s, repeat_interval → 1m; and Prometheus
 *   re-sends firing alerts every 1s (`--rules.alert.resend-delay`, 1m by default), so the Watchdog
 *   sent before Alertmanager listened arrives within a second of it, not a minute later.
 * Set at synth time instead (ordinary settings): WEBHOOK_URL → the receiver, SMTP_HOST/PORT →
 * a closed loopback port (there is no SMTP server: e-mail deliveries fail, chat and webhook ones
 * are asserted), and the presence of CHAT_WEBHOOK_URL and WEBHOOK_BEARER_TOKEN, whose values
 * Alertmanager reads from the secret files.
 *
 * One stack serves every scenario; they run in an order that keeps the destructive ones last
 * (the kvstore outage restores Redis; stopping the service comes last).
 */
import { load } from 'js-yaml';
import { ALERTS } from '../../charts/generators/alert-names';
import { CONFIG_DOCUMENTS } from '../../charts/generators/names';
import { type AlertmanagerAlert } from '../../tools/harness/alertmanager';
import { runTool } from '../../tools/harness/binary';
import { LocalStack, RECEIVER_PATHS, summarizeDelivery, TEST_INTERVALS } from '../../tools/harness/local-stack';
import { configDocuments } from '../../tools/harness/manifests';
import { waitFor } from '../../tools/harness/ports';
import { without, withoutSecretFiles, type Json } from './documents';
import {
  CH,
  channelsFor,
  chatTexts,
  destinationsOf,
  expectedRoutes,
  receiversOf,
  routedTo,
  routesSoFar,
  waitForRoutes,
  webhookDeliveries,
} from './routing';
import { burst, steadyTraffic } from './traffic';
import { detectUiLinks } from '../../scripts/ui-links';
import { dashboardPanelQueries } from './dashboard';
import { SPEC_FAMILIES } from '../helpers/spec-families';
import { PATHS, SCRAPE_JOB, SERVICE_NAME } from '../../contract';

/** Each scenario is its own client: distinct loopback source addresses, so limits never mix. */
const CLIENTS = {
  errors: '127.0.0.2',
  burst: '127.0.0.3',
  kvstore: '127.0.0.4',
  outage: '127.0.0.5',
  dashboard: '127.0.0.6',
} as const;

/** Backend replicas of the test: the smallest count where pods' counters could interleave. */
const REPLICAS = 2;

/** The search tier at the spec's defaults (§8.1, multiplier 1): a burst of 15 per client. */
const SEARCH_TIER = { limit: 60, windowSeconds: 60, burst: 15 };

/**
 * Service settings of the test. The global and IP tiers are raised so that only the burst
 * scenario's search tier refuses anything: the other scenarios' traffic must reach the service.
 */
const SERVICE_ENV = {
  ENVIRONMENT: 'testing',
  RATE_LIMIT_DEV_MULTIPLIER: '1',
  RATE_LIMIT_GLOBAL_REQUESTS: '1000000',
  RATE_LIMIT_GLOBAL_WINDOW: '60',
  RATE_LIMIT_GLOBAL_BURST: '100000',
  RATE_LIMIT_IP_REQUESTS: '100000',
  RATE_LIMIT_IP_WINDOW: '60',
  RATE_LIMIT_IP_BURST: '10000',
  RATE_LIMIT_SEARCH_REQUESTS: String(SEARCH_TIER.limit),
  RATE_LIMIT_SEARCH_WINDOW: String(SEARCH_TIER.windowSeconds),
  RATE_LIMIT_SEARCH_BURST: String(SEARCH_TIER.burst),
  // A loaded machine's stall must not read as a kvstore outage (a fresh in-memory bucket would
  // admit more of the burst); the outage of scenario 5 is a closed connection, seen at once.
  KVSTORE_COMMAND_TIMEOUT_MS: '2000',
  // The outage of scenario 2: chat answers 502 at once (fetch refuses port 9), and its tier never refuses.
  AI_PROVIDER: 'openai',
  AI_BASE_URL: 'http://127.0.0.1:9',
  AI_API_KEY: 'e2e-not-a-key',
  AI_MAX_RETRIES: '0',
  RATE_LIMIT_CHAT_REQUESTS: '100000',
  RATE_LIMIT_CHAT_WINDOW: '60',
  RATE_LIMIT_CHAT_BURST: '10000',
};

/** `{metric="…", job="svc-ai-search-backend"}` selector. */
const sel = (metric: string, extra = '') => `${metric}{job="${SCRAPE_JOB}"${extra ? `, ${extra}` : ''}}`;

/** A single-value query result, or undefined when the vector is empty. */
async function scalar(stack: LocalStack, expr: string): Promise<number | undefined> {
  const r = await stack.prometheus.query(expr);
  return r.length ? r[0].value : undefined;
}

describe(`the synthesized stack on loopback (real binaries; SHORTENED INTERVALS: scrape/eval ${TEST_INTERVALS.scrapeInterval}, rule for ${TEST_INTERVALS.ruleFor}, group_wait/group_interval ${TEST_INTERVALS.groupWait}, repeat ${TEST_INTERVALS.repeatInterval})`, () => {
  let stack: LocalStack;

  beforeAll(async () => {
    stack = await LocalStack.start({ fast: TEST_INTERVALS, serviceEnv: SERVICE_ENV, replicas: REPLICAS });
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
  }, 60_000);

  /** A test whose failure, whatever step it is in, prints the binaries' logs. */
  const scenario = (name: string, fn: () => Promise<void> | void, timeoutMs?: number) =>
    it(name, () => stack.step(name.split(':')[0], async () => fn()), timeoutMs);

  scenario('runs exactly what cdk8s synthesized, changed only by the loopback rewrites', () => {
    const synthesized = configDocuments(stack.manifests);
    const run = stack.documents;
    // prometheus.yml: same document once targets, rule file paths and intervals are set aside.
    const promVolatile = [
      'global.scrape_interval',
      'global.evaluation_interval',
      'global.scrape_timeout',
      'scrape_configs.*.static_configs',
      'scrape_configs.*.dns_sd_configs',
      'scrape_configs.*.scrape_interval',
      'scrape_configs.*.scrape_timeout',
      'alerting.alertmanagers.*.static_configs',
      'rule_files',
    ];
    const promBefore = load(synthesized.prometheusConfig);
    const promAfter = load(run.prometheusConfig) as Json;
    expect(without(promAfter, promVolatile)).toEqual(without(promBefore, promVolatile));
    const job = (promAfter.scrape_configs as Json[]).find((j) => j.job_name === SCRAPE_JOB);
    expect(job?.metrics_path).toBe(PATHS.metrics);
    // Rules: same expressions, labels, annotations; only `for` differs.
    const ruleText = synthesized.ruleFiles[CONFIG_DOCUMENTS.prometheusRules.key];
    const ruleRun = Object.entries(run.ruleFiles).find(([p]) =>
      p.endsWith(`/${CONFIG_DOCUMENTS.prometheusRules.key}`),
    )?.[1];
    expect(without(load(ruleRun ?? ''), ['groups.*.rules.*.for', 'groups.*.interval'])).toEqual(
      without(load(ruleText), ['groups.*.rules.*.for', 'groups.*.interval']),
    );
    // alertmanager.yml: same routes, receivers, inhibitions once secret paths and grouping intervals are set aside.
    const routeTimes = ['group_wait', 'group_interval', 'repeat_interval'];
    const amVolatile = routeTimes.flatMap((t) => [`route.${t}`, `route.routes.*.${t}`]);
    const amRun = withoutSecretFiles(load(run.alertmanagerConfig));
    const amSynthesized = withoutSecretFiles(load(synthesized.alertmanagerConfig));
    expect(without(amRun.rest, amVolatile)).toEqual(without(amSynthesized.rest, amVolatile));
    expect(amRun.fileKeys).toEqual(amSynthesized.fileKeys);
    expect(amRun.fileKeys.length).toBeGreaterThan(0);
    // No secret value is in any document; the token reaches Alertmanager only through its file.
    expect(run.alertmanagerConfig).not.toContain(stack.secrets.webhookBearerToken);
    expect(run.alertmanagerConfig).toContain('credentials_file');
    expect(stack.documents.rewrites.length).toBeGreaterThan(0);
  });

  scenario(
    'scenario 1: Prometheus scrapes the svc-ai-search-backend target UP in under 1 s, and every §2.1 metric family is queryable',
    async () => {
      const targets = await stack.step('targets UP', () =>
        waitFor(
          `${REPLICAS} targets of ${SCRAPE_JOB} UP`,
          async () => {
            const ts = (await stack.prometheus.targets()).filter((x) => x.labels.job === SCRAPE_JOB);
            if (ts.length !== REPLICAS) throw new Error(`${ts.length} targets of the job`);
            const down = ts.filter((t) => t.health !== 'up');
            if (down.length) throw new Error(`health ${down.map((t) => `${t.health}: ${t.lastError}`).join('; ')}`);
            return ts;
          },
          { timeoutMs: 20000 },
        ),
      );
      // One target per replica, each with its own instance: no scrape lands on "some pod".
      expect(targets.map((t) => t.scrapeUrl).sort()).toEqual(
        stack.services.map((s) => `${s.url}${PATHS.metrics}`).sort(),
      );
      expect(new Set(targets.map((t) => t.labels.instance)).size).toBe(REPLICAS);
      for (const target of targets) {
        expect(target.lastError).toBe('');
        expect(target.lastScrapeDuration).toBeGreaterThan(0);
        expect(target.lastScrapeDuration).toBeLessThan(1); // spec §1.6: a healthy target scrapes in under 1 s
      }
      // One slow scrape may read 0; the targets must be up, not every sample.
      await waitFor(`sum(up) == ${REPLICAS}`, async () => (await scalar(stack, `sum(${sel('up')})`)) === REPLICAS);
      await stack.step('Prometheus scrapes itself and Alertmanager', () =>
        waitFor('jobs prometheus and alertmanager UP', async () => {
          const up = (await stack.prometheus.targets()).filter(
            (t) => ['prometheus', 'alertmanager'].includes(t.labels.job) && t.health === 'up',
          );
          return up.length === 2;
        }),
      );
      await stack.step(
        'make up prints Prometheus links that open real pages (classic UI on Debian) and amtool commands',
        async () => {
          const links = await detectUiLinks(stack.prometheus.url, stack.alertmanager.url);
          for (const link of links.prometheus) {
            const res = await fetch(link);
            expect({ link, status: res.status }).toEqual({ link, status: 200 });
            expect(await res.text()).toMatch(/Prometheus/);
          }
          if (links.alertmanagerUi) expect((await fetch(links.alertmanagerUi)).status).toBe(200);
          expect(links.amtool.join('\n')).toContain(`--alertmanager.url=${stack.alertmanager.url} alert query`);
          // The printed commands work as printed against the real Alertmanager.
          for (const command of links.amtool) {
            const [tool, ...args] = command.split(' ');
            const run = runTool(tool, args);
            expect({ command, status: run.status, stderr: run.stderr }).toEqual({ command, status: 0, stderr: '' });
          }
        },
      );

      await stack.step('every §2.1 family in Prometheus', async () => {
        for (const family of SPEC_FAMILIES) {
          const series = await waitFor(`${family} in Prometheus`, async () => {
            const r = await stack.prometheus.query(sel(family));
            return r.length ? r : undefined;
          });
          for (const s of series) expect(s.metric).toMatchObject({ __name__: family, job: SCRAPE_JOB });
          if (family.includes('_by_type_'))
            expect(series.every((s) => typeof s.metric.type === 'string' && s.metric.type)).toBe(true);
        }
      });
    },
    60_000,
  );

  scenario(
    'scenario 4: the §6.3 test alert posted to /api/v1/alerts reaches the receivers its labels route to',
    async () => {
      const alerts = [
        { alertname: 'E2ETestCritical', severity: 'critical', service: SERVICE_NAME },
        { alertname: 'E2ETestWarning', severity: 'warning', service: SERVICE_NAME },
        { alertname: 'E2ETestInfo', severity: 'info', service: SERVICE_NAME },
        // Matches no row of §6.2: the default route.
        { alertname: 'E2ETestUnrouted', severity: 'none', service: 'some-other-service' },
      ].map((labels) => ({
        labels,
        annotations: { summary: `Test alert ${labels.alertname}`, description: 'Posted by the e2e test (spec §6.3)' },
      }));
      try {
        await stack.step('post the test alerts', () => stack.alertmanager.post(alerts, '/api/v1/alerts'));
        await stack.step('deliveries of the test alerts', () =>
          Promise.all(alerts.map(({ labels }) => waitForRoutes(stack, labels.alertname, expectedRoutes(labels)))),
        );
        // Alertmanager's own routing of each: no receiver beyond those delivered can deliver later.
        const receivers = new Map<string, string[]>();
        for (const { labels } of alerts) {
          receivers.set(labels.alertname, await receiversOf(stack, labels.alertname));
          const expected = { alert: labels.alertname, ...expectedRoutes(labels) };
          expect({ alert: labels.alertname, ...destinationsOf(stack, receivers.get(labels.alertname)!) }).toEqual(
            expected,
          );
          expect({ alert: labels.alertname, ...routesSoFar(stack, labels.alertname) }).toEqual(expected);
        }
        const [critical] = webhookDeliveries(stack, 'E2ETestCritical');
        expect(critical.headers.authorization).toBe(`Bearer ${stack.secrets.webhookBearerToken}`);
        const body = critical.body as {
          alerts: Array<{ labels: Record<string, string>; annotations: Record<string, string> }>;
        };
        expect(body.alerts[0].annotations).toEqual(alerts[0].annotations);
        expect(body.alerts[0].labels).toMatchObject(alerts[0].labels);

        // §6.2 info: no resolved notifications. Resolving the info alert notifies #backend, never #alerts-info.
        const now = new Date().toISOString();
        await stack.alertmanager.post(
          alerts.map((a) => ({ ...a, endsAt: now })),
          '/api/v1/alerts',
        );
        const warningChannels = expectedRoutes(alerts[1].labels).channels;
        await stack.step('resolved notifications', () =>
          waitFor(
            'E2ETestInfo RESOLVED on the backend channel and E2ETestWarning RESOLVED on its channels',
            () =>
              channelsFor(stack, 'E2ETestInfo', 'RESOLVED').includes(CH.backend) &&
              warningChannels.every((c) => channelsFor(stack, 'E2ETestWarning', 'RESOLVED').includes(c)),
            { timeoutMs: 30000 },
          ),
        );
        // Of the receivers Alertmanager routed each to, only these send resolved notifications
        // (its config, as it runs it): no other channel can get a RESOLVED later.
        expect(destinationsOf(stack, receivers.get('E2ETestInfo')!, 'RESOLVED').channels).toEqual([CH.backend]);
        expect(destinationsOf(stack, receivers.get('E2ETestWarning')!, 'RESOLVED').channels).toEqual(warningChannels);
        expect(channelsFor(stack, 'E2ETestInfo', 'RESOLVED')).toEqual([CH.backend]);
        expect(channelsFor(stack, 'E2ETestWarning', 'RESOLVED')).toEqual(warningChannels);
      } finally {
        // Leave nothing active that could inhibit or group with the scenarios that follow.
        const now = new Date().toISOString();
        await stack.alertmanager
          .post(
            alerts.map((a) => ({ ...a, endsAt: now })),
            '/api/v2/alerts',
          )
          .catch(() => undefined);
      }
    },
    90_000,
  );

  scenario(
    'scenario 2: two replicas, each its own target: client errors on one, then successes on both, reach no receiver; then a real outage (5xx on both) fires HighErrorRate and the fast burn, routed per §6.2',
    async () => {
      const { prometheus } = stack;
      const [first, second] = stack.services;
      const errorAlerts: string[] = [ALERTS.highErrorRate, ALERTS.errorBudgetFastBurn, ALERTS.errorBudgetSlowBurn];
      await stack.step('client errors on one replica, then successes on both', async () => {
        // 404s (a scan) on the first replica only: the old rules counted them as failures.
        const scan = await burst(first, 60, (i) => `/api/e2e/no-such-endpoint/${i}`, CLIENTS.errors, 10);
        expect(scan.every((r) => r.status === 404)).toBe(true);
        // Then only successes, on both; a fresh client per round stays inside the search tier's burst.
        for (let round = 0; round < 4; round++) {
          const from = `127.0.1.${round + 1}`;
          const ok = await Promise.all(
            [first, second].map((s) => burst(s, 6, (i) => `/api/search?q=fine${round}x${i}`, from, 3)),
          );
          expect(ok.flat().every((r) => r.status === 200)).toBe(true);
        }
        // Both replicas' requests are in Prometheus, and the old definition (failed >= 400 / total) would fire.
        await waitFor('both replicas counted in Prometheus', async () => {
          const r = await prometheus.query(
            `sum by (instance) (${sel('svc_ai_search_http_request_duration_seconds_count', 'status_class="2xx"')})`,
          );
          return r.length === REPLICAS;
        });
        const old = await scalar(
          stack,
          `sum(rate(${sel('svc_ai_search_requests_failed')}[5m])) / sum(rate(${sel('svc_ai_search_requests_total')}[5m]))`,
        );
        expect(old).toBeGreaterThan(0.05);
      });
      // Every request above scraped, then evaluated past every shortened `for`: an error alert
      // whose expression held would be firing by now (on Prometheus's own evaluations, not a fixed wait).
      await prometheus.evaluatedPastFor(await prometheus.scrapedSince(SCRAPE_JOB, Date.now()));
      const active = (await prometheus.alerts()).filter((a) => errorAlerts.includes(a.labels.alertname));
      expect(active.map((a) => `${a.labels.alertname} ${a.state}`)).toEqual([]);
      for (const name of errorAlerts)
        expect({ name, ...routesSoFar(stack, name) }).toEqual({ name, channels: [], webhook: false });

      let sent = 0;
      const fired = await stack.step('HighErrorRate fires in Prometheus during a real outage', async () => {
        // The AI provider is unreachable: every chat answer is a 502, on both replicas.
        for (const deadline = Date.now() + 60000; Date.now() < deadline;) {
          const responses = (
            await Promise.all(
              stack.services.map((s) =>
                Promise.all(
                  Array.from({ length: 10 }, (_, i) =>
                    s.request('/api/chat', {
                      method: 'POST',
                      body: { message: `outage ${sent + i}` },
                      from: CLIENTS.outage,
                    }),
                  ),
                ),
              ),
            )
          ).flat();
          sent += responses.length;
          expect(responses.every((r) => r.status === 502)).toBe(true);
          const alert = (await prometheus.alerts()).find(
            (a) => a.labels.alertname === ALERTS.highErrorRate && a.state === 'firing',
          );
          if (alert) return alert;
          await new Promise((r) => setTimeout(r, 500));
        }
        throw new Error(`HighErrorRate did not fire after ${sent} failing requests`);
      });
      expect(fired.labels).toMatchObject({ severity: 'warning', service: SERVICE_NAME, job: SCRAPE_JOB });
      const fast = await stack.step('ErrorBudgetFastBurn fires', () =>
        prometheus.waitForFiring(ALERTS.errorBudgetFastBurn),
      );
      expect(fast.labels).toMatchObject({ severity: 'critical', service: SERVICE_NAME });

      const expected = expectedRoutes(fired.labels);
      await stack.step('HighErrorRate deliveries', () => waitForRoutes(stack, ALERTS.highErrorRate, expected));
      expect(await routedTo(stack, ALERTS.highErrorRate)).toEqual(expected);
      expect(routesSoFar(stack, ALERTS.highErrorRate)).toEqual(expected);
      const held = await stack.alertmanager.waitForAlert(ALERTS.highErrorRate);
      expect(held.status.state).toBe('active');
    },
    150_000,
  );

  scenario(
    'scenario 7: the pipeline watches itself: the Watchdog heartbeat reaches its own receiver only; e-mail to a closed SMTP port raises AlertmanagerFailedToSendNotifications',
    async () => {
      const beat = await stack.step('Watchdog on the heartbeat receiver', () =>
        stack.receiver.waitFor(
          'Watchdog on the heartbeat receiver',
          (d) => d.path === RECEIVER_PATHS.heartbeat && summarizeDelivery(d.body).includes(ALERTS.watchdog),
          {
            timeoutMs: 30000,
          },
        ),
      );
      expect(summarizeDelivery(beat.body)).toBe(`firing: ${ALERTS.watchdog}`);
      expect(channelsFor(stack, ALERTS.watchdog)).toEqual([]);
      expect(webhookDeliveries(stack, ALERTS.watchdog)).toEqual([]);

      // Every e-mail so far went to SMTP_HOST:SMTP_PORT, a closed loopback port.
      const failed = await stack.step(`${ALERTS.alertmanagerFailedToSend} fires`, () =>
        stack.prometheus.waitForFiring(ALERTS.alertmanagerFailedToSend, { timeoutMs: 60000 }),
      );
      expect(failed.labels).toMatchObject({
        severity: 'warning',
        component: 'monitoring',
        integration: 'email',
        job: 'alertmanager',
      });
      const expected = expectedRoutes(failed.labels);
      await stack.step(`${ALERTS.alertmanagerFailedToSend} deliveries`, () =>
        waitForRoutes(stack, ALERTS.alertmanagerFailedToSend, expected),
      );
    },
    90_000,
  );

  scenario(
    'scenario 6: a burst from one client gets 429s with the right headers and body; metrics and health keep answering; Prometheus shows the refusals',
    async () => {
      const { service } = stack;
      const refusedBefore = await stack.step('refusals before', async () => {
        const v = await waitFor('the rate-limit counter in Prometheus', () =>
          scalar(stack, `sum(${sel('svc_ai_search_rate_limit_requests_total', 'tier="search", result="refused"')})`),
        );
        return v;
      });
      const n = SEARCH_TIER.burst * 3;
      const startedAt = Date.now();
      const [responses, ops] = await Promise.all([
        burst(service, n, (i) => `/api/search?q=burst${i}`, CLIENTS.burst),
        // The same client, during its burst: the operational endpoints are exempt (spec §4.1).
        Promise.all(
          [
            '/api/metrics/prometheus',
            '/health',
            '/health/ready',
            '/health/live',
            '/api/health',
            '/metrics',
            '/api/rate-limit',
          ].map((p) => service.request(p, { from: CLIENTS.burst }).then((r) => ({ path: p, status: r.status }))),
        ),
      ]);
      const refused = responses.filter((r) => r.status === 429);
      const admitted = responses.filter((r) => r.status !== 429);
      expect(refused.length).toBeGreaterThan(0);
      expect(admitted.length).toBeGreaterThan(0);
      // The burst, plus what the tier refills (limit per window) while the burst runs.
      const refill = Math.ceil((((Date.now() - startedAt) / 1000) * SEARCH_TIER.limit) / SEARCH_TIER.windowSeconds);
      expect(admitted.length).toBeLessThanOrEqual(SEARCH_TIER.burst + refill + 1);
      expect(admitted.every((r) => r.status < 500)).toBe(true);
      // Every reset lies between the burst's start and the moment a bucket emptied at its end is full
      // again (burst × the emission interval). Not "now": on a loaded machine a long burst's first
      // answers may name a second already past.
      const startSeconds = Math.floor(startedAt / 1000);
      const latestReset =
        Math.ceil(Date.now() / 1000) + (SEARCH_TIER.burst * SEARCH_TIER.windowSeconds) / SEARCH_TIER.limit;
      for (const r of admitted) {
        expect(Number(r.headers['x-ratelimit-limit'])).toBe(SEARCH_TIER.limit);
        expect(Number.isInteger(Number(r.headers['x-ratelimit-remaining']))).toBe(true);
        expect(Number(r.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(startSeconds);
        expect(Number(r.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(latestReset);
      }
      for (const r of refused) {
        expect(r.headers['x-ratelimit-limit']).toBe(String(SEARCH_TIER.limit));
        expect(r.headers['x-ratelimit-remaining']).toBe('0');
        const reset = Number(r.headers['x-ratelimit-reset']);
        expect(Number.isInteger(reset) && reset >= startSeconds && reset <= latestReset).toBe(true);
        const retryAfter = Number(r.headers['retry-after']);
        expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
        const body = r.json<{ error: unknown; message: unknown; retry_after: unknown }>();
        expect(typeof body.error).toBe('string');
        expect(typeof body.message).toBe('string');
        expect(body.retry_after).toBe(retryAfter);
        expect(r.headers['content-type']).toMatch(/^application\/json/);
      }
      expect(ops).toEqual(ops.map((o) => ({ ...o, status: 200 })));
      const after = await Promise.all(
        ['/api/metrics/prometheus', '/health', '/health/live'].map((p) =>
          service.request(p, { from: CLIENTS.burst }).then((r) => r.status),
        ),
      );
      expect(after).toEqual([200, 200, 200]);

      await stack.step('refusals in Prometheus', () =>
        waitFor(
          `search-tier refusals in Prometheus to grow by ${refused.length}`,
          async () => {
            const v = await scalar(
              stack,
              `sum(${sel('svc_ai_search_rate_limit_requests_total', 'tier="search", result="refused"')})`,
            );
            if (v !== (refusedBefore ?? 0) + refused.length) throw new Error(`refused{tier="search"} = ${v}`);
            return true;
          },
          { timeoutMs: 15000 },
        ),
      );
      const allowedSearch = await scalar(
        stack,
        `sum(${sel('svc_ai_search_rate_limit_requests_total', 'tier="search", result="allowed"')})`,
      );
      expect(allowedSearch).toBeGreaterThanOrEqual(admitted.length);
    },
    60_000,
  );

  scenario(
    'scenario 8: after real traffic every query of the synthesized Grafana dashboard runs against the real Prometheus and returns data',
    async () => {
      const queries = dashboardPanelQueries(stack.manifests);
      expect(queries.length).toBeGreaterThan(20);
      // Fresh traffic on both replicas (the earlier scenarios made the errors, refusals and tier decisions).
      await stack.step('dashboard traffic', async () => {
        for (const service of stack.services) {
          await burst(
            service,
            10,
            (i) => (i % 2 ? `/api/search?q=dashboard${i}` : '/api/rate-limit'),
            CLIENTS.dashboard,
            2,
          );
        }
      });
      // The concrete window (5m for $__rate_interval) spans the whole run so far, so every rate has samples.
      const empty = await stack.step('every panel query returns data', () =>
        waitFor(
          'every dashboard query to return at least one finite value',
          async () => {
            const missing: string[] = [];
            for (const q of queries) {
              const r = await stack.prometheus.query(q.concrete);
              if (!r.some((x) => Number.isFinite(x.value)))
                missing.push(`${q.panel} [${q.refId}]: ${q.concrete} → ${JSON.stringify(r.slice(0, 2))}`);
            }
            if (missing.length) throw new Error(missing.join('\n'));
            return missing;
          },
          { timeoutMs: 30000 },
        ),
      );
      expect(empty).toEqual([]);
    },
    90_000,
  );

  scenario(
    'scenario 5: the kvstore goes away under traffic: no 5xx, backend memory, the fallback alert fires; it comes back and all returns to normal',
    async () => {
      const { service, prometheus, redis } = stack;
      const rateLimitBackend = async () =>
        (await service.request('/api/rate-limit')).json<{ backend: string }>().backend;
      await stack.step('kvstore in use before the outage', async () => {
        expect(await rateLimitBackend()).toBe('kvstore');
        await waitFor(
          'backend gauge kvstore=1 in Prometheus',
          async () => (await scalar(stack, sel('svc_ai_search_rate_limit_backend', 'backend="kvstore"'))) === 1,
        );
      });
      // At most four requests a second, one in four a search: no faster than the search tier
      // refills (1/s), so the traffic is served, never refused, however long the outage lasts.
      const traffic = steadyTraffic(
        service,
        CLIENTS.kvstore,
        (i) => (i % 4 === 0 ? `/api/search?q=kv${i}` : `/api/e2e/kvstore/${i}`),
        250,
      );
      const phases = { outage: 0, restart: 0, normal: 0 };
      try {
        await redis.kill();
        await stack.step('backend becomes memory', () =>
          waitFor('/api/rate-limit backend memory', async () => (await rateLimitBackend()) === 'memory', {
            timeoutMs: 15000,
          }),
        );
        phases.outage = traffic.results.length;
        const health = (await service.request('/health')).json<{ status: string; rate_limit_backend: string }>();
        expect(health).toMatchObject({ status: 'degraded', rate_limit_backend: 'memory' });
        const alert = await stack.step(`${ALERTS.kvstoreFallback} fires`, () =>
          prometheus.waitForFiring(ALERTS.kvstoreFallback),
        );
        expect(alert.labels).toMatchObject({ service: SERVICE_NAME });
        await stack.step(`${ALERTS.kvstoreFallback} reaches Alertmanager and is routed`, async () => {
          const expected = expectedRoutes(alert.labels);
          await waitFor(`${ALERTS.kvstoreFallback} on ${expected.channels.join(', ')}`, () =>
            expected.channels.every((c) => channelsFor(stack, ALERTS.kvstoreFallback).includes(c)),
          );
        });

        phases.restart = traffic.results.length;
        await redis.restart();
        await stack.step('back to normal', async () => {
          await waitFor('/api/rate-limit backend kvstore', async () => (await rateLimitBackend()) === 'kvstore', {
            timeoutMs: 20000,
          });
          await waitFor(
            '/health status ok',
            async () => (await service.request('/health')).json<{ status: string }>().status === 'ok',
          );
          await waitFor(
            'backend gauge kvstore=1 in Prometheus',
            async () => (await scalar(stack, sel('svc_ai_search_rate_limit_backend', 'backend="kvstore"'))) === 1,
          );
          await prometheus.waitForInactive(ALERTS.kvstoreFallback);
        });
        phases.normal = traffic.results.length;
        await waitFor('traffic served after the recovery', () => traffic.results.length >= phases.normal + 4);
      } finally {
        await traffic.stop();
        if (!redis.process.running) await redis.restart().catch(() => undefined);
      }
      const searches = (from: number, to?: number) =>
        traffic.results.slice(from, to).filter((r) => r.path.startsWith('/api/search'));
      expect(traffic.errors).toEqual([]);
      // Spec §7: during the outage the service limits in memory and returns no error to the client.
      expect(traffic.results.filter((r) => r.status >= 500 || r.status === 429)).toEqual([]);
      expect(searches(phases.outage, phases.restart).length).toBeGreaterThan(0);
      expect(searches(phases.outage, phases.restart).every((r) => r.status === 200)).toBe(true);
      expect(searches(phases.normal).length).toBeGreaterThan(0);
      expect(searches(0).every((r) => r.status === 200)).toBe(true);
    },
    120_000,
  );

  scenario(
    "scenario 3: stopping the service fires BackendDown; the webhook gets it with the bearer token from the secret file; inhibition silences the backend's other alerts",
    async () => {
      const { prometheus, alertmanager } = stack;
      for (const service of stack.services) await service.stop();
      const fired = await stack.step('BackendDown fires', async () => {
        await waitFor('every target DOWN', async () => {
          const ts = (await prometheus.targets()).filter((t) => t.labels.job === SCRAPE_JOB);
          return ts.length === REPLICAS && ts.every((t) => t.health === 'down');
        });
        return prometheus.waitForFiring(ALERTS.backendDown);
      });
      expect(fired.labels).toMatchObject({ severity: 'critical', service: SERVICE_NAME, job: SCRAPE_JOB });

      const hook = await stack.step('BackendDown on the webhook', () =>
        stack.receiver.waitFor('BackendDown on the webhook', (d) =>
          webhookDeliveries(stack, ALERTS.backendDown).includes(d),
        ),
      );
      expect(hook.headers.authorization).toBe(`Bearer ${stack.secrets.webhookBearerToken}`);
      const expected = expectedRoutes(fired.labels);
      await stack.step('BackendDown deliveries', () => waitForRoutes(stack, ALERTS.backendDown, expected));
      expect(await routedTo(stack, ALERTS.backendDown)).toEqual(expected);
      expect(routesSoFar(stack, ALERTS.backendDown)).toEqual(expected);

      // Inhibition: a warning of the same backend raised now (copying BackendDown's job, instance and
      // service) is held suppressed by BackendDown and never notified; so is every other backend alert.
      // Its companion has the same grouping labels (alertname, severity, service), so it rides in each
      // of the probe's aggregation groups, but `component="monitoring"`, which no inhibition targets
      // (a backend outage does not silence the pipeline's own alerts): every flush of those groups
      // notifies the companion, and would notify the probe with it had the inhibition not held it. The
      // companion's message on every route is Alertmanager's own account that the probe's groups were
      // flushed (the test waited 4 s, a few group_wait periods, instead).
      const down = await alertmanager.waitForAlert(ALERTS.backendDown, (a) => a.status.state === 'active');
      const probe = { ...fired.labels, alertname: 'E2EBackendProbe', severity: 'warning' };
      const companion = { ...probe, component: 'monitoring' };
      await alertmanager.post([
        { labels: probe, annotations: { summary: 'probe', description: 'must be inhibited by BackendDown' } },
        {
          labels: companion,
          annotations: { summary: 'companion', description: 'not inhibited: flushed with the probe' },
        },
      ]);
      const suppressed = await stack.step('the probe is inhibited', () =>
        alertmanager.waitForAlert('E2EBackendProbe', (a) => a.status.state === 'suppressed'),
      );
      expect(suppressed.status.inhibitedBy).toContain(down.fingerprint);
      const routes = expectedRoutes(companion);
      expect(routes).toEqual(expectedRoutes(probe));
      await stack.step('the companion on every route of the probe', () =>
        waitForRoutes(stack, 'E2EBackendProbe', routes),
      );
      const texts = chatTexts(stack, 'E2EBackendProbe');
      expect(texts.length).toBeGreaterThanOrEqual(routes.channels.length);
      for (const text of texts) {
        expect(text).toContain('companion');
        expect(text).not.toContain('must be inhibited by BackendDown');
      }
      expect(routes.webhook).toBe(false);
      expect(webhookDeliveries(stack, 'E2EBackendProbe')).toEqual([]);
      const others = (await alertmanager.alerts()).filter(
        // The pipeline's own alerts (the heartbeat among them) are not consequences of the outage.
        (a: AlertmanagerAlert) =>
          a.labels.service === SERVICE_NAME &&
          a.labels.component !== 'monitoring' &&
          a.labels.alertname !== ALERTS.backendDown &&
          a.status.state !== 'unprocessed',
      );
      expect(others.map((a) => ({ alert: a.labels.alertname, state: a.status.state }))).toEqual(
        others.map((a) => ({ alert: a.labels.alertname, state: 'suppressed' })),
      );
    },
    90_000,
  );
});
