import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ManagedProcess } from './binary';
import { freePort, waitFor, type WaitForOptions } from './ports';

/** One scrape target as `GET /api/v1/targets` reports it. */
export interface PrometheusTarget {
  readonly labels: Readonly<Record<string, string>>;
  readonly scrapePool: string;
  readonly scrapeUrl: string;
  /** `up`, `down` or `unknown`. */
  readonly health: string;
  readonly lastError: string;
  readonly lastScrape: string;
  /** Seconds. */
  readonly lastScrapeDuration: number;
}

/** One series of an instant-vector query result. */
export interface PrometheusSample {
  readonly metric: Readonly<Record<string, string>>;
  /** The value as a number (Prometheus sends `[time, "value"]`). */
  readonly value: number;
}

/** One alert as `GET /api/v1/alerts` reports it. */
export interface PrometheusAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** `pending` or `firing`. */
  readonly state: string;
  readonly activeAt: string;
  readonly value: string;
}

/** One rule group as `GET /api/v1/rules` reports it (the fields the tests use). */
export interface PrometheusRuleGroup {
  readonly name: string;
  readonly file: string;
  /** Seconds between evaluations. */
  readonly interval: number;
  /** When the latest evaluation began (RFC 3339; the zero time before the first). */
  readonly lastEvaluation: string;
  readonly rules: ReadonlyArray<{
    readonly name: string;
    readonly type: string;
    readonly health: string;
    readonly lastError?: string;
    /** An alerting rule's `for`, seconds. */
    readonly duration?: number;
  }>;
}

/** Where and how to start Prometheus. */
export interface PrometheusOptions {
  /** prometheus.yml, already written (rule files next to it, as it refers to them). */
  readonly configFile: string;
  /** A folder of its own: the TSDB goes to `<dir>/data`. */
  readonly dir: string;
  /** Listen port on 127.0.0.1. @default a free port */
  readonly port?: number;
  /** `--rules.alert.resend-delay`: how soon a firing alert is sent to Alertmanager again. @default Prometheus's (1m) */
  readonly alertResendDelay?: string;
}

/**
 * A real `prometheus` (Debian package) on loopback: `--web.enable-lifecycle` so a test can reload
 * the config, storage in a temp folder. The API helpers return the `data` of Prometheus's JSON
 * envelope and throw on `status: "error"`.
 */
export class PrometheusServer {
  readonly process: ManagedProcess;

  private constructor(
    readonly port: number,
    readonly options: PrometheusOptions,
  ) {
    const data = join(options.dir, 'data');
    mkdirSync(data, { recursive: true });
    this.process = new ManagedProcess('prometheus', 'prometheus', [
      `--config.file=${options.configFile}`,
      `--storage.tsdb.path=${data}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-lifecycle',
      '--log.level=info',
      ...(options.alertResendDelay ? [`--rules.alert.resend-delay=${options.alertResendDelay}`] : []),
    ]);
  }

  /** Starts Prometheus and waits for `/-/ready`. */
  static async start(options: PrometheusOptions): Promise<PrometheusServer> {
    const server = new PrometheusServer(options.port ?? (await freePort()), options);
    server.process.start();
    await server.waitReady();
    return server;
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private async waitReady(): Promise<void> {
    await waitFor(
      'prometheus /-/ready',
      async () => {
        if (!this.process.running)
          throw new Error(`prometheus exited (${this.process.exitStatus}):\n${this.process.tail(30)}`);
        const res = await fetch(`${this.url}/-/ready`);
        return res.status === 200;
      },
      { timeoutMs: 30000, intervalMs: 200 },
    );
  }

  /** GET `/api/v1/<path>` and return `data`. */
  async api<T>(path: string, params: Record<string, string> = {}): Promise<T> {
    const qs = new URLSearchParams(params).toString();
    const res = await fetch(`${this.url}/api/v1/${path}${qs ? `?${qs}` : ''}`);
    const body = (await res.json()) as { status: string; data: T; error?: string; errorType?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.errorType}: ${body.error}`);
    return body.data;
  }

  /** Active scrape targets. */
  async targets(): Promise<PrometheusTarget[]> {
    const data = await this.api<{ activeTargets: PrometheusTarget[] }>('targets', { state: 'active' });
    return data.activeTargets;
  }

  /** Evaluates an instant query now; only vector results are supported. */
  async query(expr: string): Promise<PrometheusSample[]> {
    const data = await this.api<{
      resultType: string;
      result: Array<{ metric: Record<string, string>; value: [number, string] }>;
    }>('query', { query: expr });
    if (data.resultType !== 'vector') throw new Error(`query ${expr}: expected a vector, got ${data.resultType}`);
    return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  /** Alerts that are pending or firing now. */
  async alerts(): Promise<PrometheusAlert[]> {
    const data = await this.api<{ alerts: PrometheusAlert[] }>('alerts');
    return data.alerts;
  }

  /** Loaded rule groups (with each rule's health and last evaluation error). */
  async rules(): Promise<PrometheusRuleGroup[]> {
    const data = await this.api<{ groups: PrometheusRuleGroup[] }>('rules');
    return data.groups;
  }

  /**
   * Resolves, with the time (ms since the epoch) the last of them ended, once every target of
   * `job` has ended a scrape begun at `sinceMs` or later: from then on, what the targets counted
   * before `sinceMs` is in the TSDB.
   */
  async scrapedSince(job: string, sinceMs: number, opts: WaitForOptions = {}): Promise<number> {
    return waitFor(
      `every target of ${job} scraped again`,
      async () => {
        const targets = (await this.targets()).filter((t) => t.labels.job === job);
        const ends = targets.map((t) => Date.parse(t.lastScrape) + t.lastScrapeDuration * 1000);
        if (targets.length === 0 || targets.some((t) => Date.parse(t.lastScrape) < sinceMs)) return undefined;
        return Math.max(...ends);
      },
      { timeoutMs: opts.timeoutMs ?? 30000, intervalMs: opts.intervalMs ?? 200 },
    );
  }

  /**
   * Resolves once every rule group has evaluated long enough after `sinceMs` for any of its alerts
   * whose expression held from `sinceMs` on to be firing: an evaluation whose query time is at
   * least one interval (the first evaluation to see the data) plus the longest `for` after it.
   * Prometheus's query time of an evaluation lags the moment it begins (`lastEvaluation`) by less
   * than an interval (later ones are skipped), hence two intervals. Proves that an alert did not
   * fire on Prometheus's own evaluations, not on a guess of how long they take.
   */
  async evaluatedPastFor(sinceMs: number, opts: WaitForOptions = {}): Promise<void> {
    await waitFor(
      'every rule group evaluated past its longest `for`',
      async () =>
        (await this.rules()).every((g) => {
          const longestFor = Math.max(0, ...g.rules.map((r) => r.duration ?? 0));
          return Date.parse(g.lastEvaluation) >= sinceMs + (2 * g.interval + longestFor) * 1000;
        }),
      { timeoutMs: opts.timeoutMs ?? 30000, intervalMs: opts.intervalMs ?? 200 },
    );
  }

  /** Resolves with the firing alert named `alertname` (matching `labels` too) once there is one. */
  async waitForFiring(
    alertname: string,
    opts: WaitForOptions & { labels?: Record<string, string> } = {},
  ): Promise<PrometheusAlert> {
    return waitFor(
      `prometheus to fire ${alertname}`,
      async () => {
        const alerts = await this.alerts();
        const match = alerts.find(
          (a) =>
            a.labels.alertname === alertname &&
            a.state === 'firing' &&
            Object.entries(opts.labels ?? {}).every(([k, v]) => a.labels[k] === v),
        );
        if (match) return match;
        throw new Error(
          `active alerts: ${alerts.map((a) => `${a.labels.alertname}(${a.state})`).join(', ') || 'none'}`,
        );
      },
      { timeoutMs: opts.timeoutMs ?? 30000, intervalMs: opts.intervalMs ?? 500 },
    );
  }

  /** Resolves once no alert named `alertname` is pending or firing. */
  async waitForInactive(alertname: string, opts: WaitForOptions = {}): Promise<void> {
    await waitFor(
      `prometheus to stop firing ${alertname}`,
      async () => !(await this.alerts()).some((a) => a.labels.alertname === alertname),
      { timeoutMs: opts.timeoutMs ?? 30000, intervalMs: opts.intervalMs ?? 500 },
    );
  }

  /** Re-reads the config and rule files (`POST /-/reload`). */
  async reload(): Promise<void> {
    const res = await fetch(`${this.url}/-/reload`, { method: 'POST' });
    if (res.status !== 200) throw new Error(`prometheus reload: ${res.status} ${await res.text()}`);
  }

  /** Stops Prometheus (its folder belongs to the caller). */
  async stop(): Promise<void> {
    await this.process.stop('SIGTERM', 10000);
  }
}
