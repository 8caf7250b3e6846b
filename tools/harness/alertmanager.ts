import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ManagedProcess } from './binary';
import { freePort, waitFor, type WaitForOptions } from './ports';

/** One alert as Alertmanager's `GET /api/v2/alerts` reports it. */
export interface AlertmanagerAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly fingerprint: string;
  readonly receivers: ReadonlyArray<{ readonly name: string }>;
  readonly status: {
    /** `active`, `suppressed` or `unprocessed`. */
    readonly state: string;
    /** Fingerprints of the alerts that inhibit this one. */
    readonly inhibitedBy: readonly string[];
    readonly silencedBy: readonly string[];
  };
  readonly startsAt: string;
  readonly endsAt: string;
}

/** An alert as a client posts it (spec §6.3). */
export interface PostableAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly startsAt?: string;
  readonly endsAt?: string;
}

/** Where and how to start Alertmanager. */
export interface AlertmanagerOptions {
  /** alertmanager.yml, already written (secret files where it refers to them). */
  readonly configFile: string;
  /** A folder of its own: silences and the notification log go to `<dir>/data`. */
  readonly dir: string;
  /** Listen port on 127.0.0.1. @default a free port */
  readonly port?: number;
}

/**
 * A real `prometheus-alertmanager` (Debian's name for Alertmanager) on loopback. Clustering is
 * switched off (`--cluster.listen-address=` empty): a single instance must not gossip, and the
 * default cluster port 9094 may be taken.
 */
export class AlertmanagerServer {
  readonly process: ManagedProcess;

  private constructor(
    readonly port: number,
    readonly options: AlertmanagerOptions,
  ) {
    const data = join(options.dir, 'data');
    mkdirSync(data, { recursive: true });
    this.process = new ManagedProcess('alertmanager', 'prometheus-alertmanager', [
      `--config.file=${options.configFile}`,
      `--storage.path=${data}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
      '--log.level=debug',
    ]);
  }

  /** Starts Alertmanager and waits for `/-/ready`. */
  static async start(options: AlertmanagerOptions): Promise<AlertmanagerServer> {
    const server = new AlertmanagerServer(options.port ?? (await freePort()), options);
    server.process.start();
    await waitFor(
      'alertmanager /-/ready',
      async () => {
        if (!server.process.running) {
          throw new Error(`alertmanager exited (${server.process.exitStatus}):\n${server.process.tail(30)}`);
        }
        return (await fetch(`${server.url}/-/ready`)).status === 200;
      },
      { timeoutMs: 30000, intervalMs: 200 },
    );
    return server;
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Every alert Alertmanager holds, inhibited and silenced ones included. */
  async alerts(): Promise<AlertmanagerAlert[]> {
    const res = await fetch(`${this.url}/api/v2/alerts`);
    if (res.status !== 200) throw new Error(`alertmanager /api/v2/alerts: ${res.status} ${await res.text()}`);
    return (await res.json()) as AlertmanagerAlert[];
  }

  /**
   * Posts alerts to `path`: `/api/v1/alerts` is the spec's test-alert endpoint (§6.3; Alertmanager
   * 0.25 still serves the v1 API), `/api/v2/alerts` the current one. Throws unless 200.
   */
  async post(
    alerts: readonly PostableAlert[],
    path: '/api/v1/alerts' | '/api/v2/alerts' = '/api/v2/alerts',
  ): Promise<void> {
    const res = await fetch(`${this.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(alerts),
    });
    if (res.status !== 200) throw new Error(`alertmanager POST ${path}: ${res.status} ${await res.text()}`);
  }

  /** Resolves with the alert named `alertname` once Alertmanager holds it and `accept` agrees. */
  async waitForAlert(
    alertname: string,
    accept: (a: AlertmanagerAlert) => boolean = () => true,
    opts: WaitForOptions = {},
  ): Promise<AlertmanagerAlert> {
    return waitFor(
      `alertmanager to hold ${alertname}`,
      async () => {
        const all = await this.alerts();
        const match = all.find((a) => a.labels.alertname === alertname && accept(a));
        if (match) return match;
        throw new Error(`held: ${all.map((a) => `${a.labels.alertname}(${a.status.state})`).join(', ') || 'none'}`);
      },
      { timeoutMs: opts.timeoutMs ?? 30000, intervalMs: opts.intervalMs ?? 500 },
    );
  }

  /** Stops Alertmanager (its folder belongs to the caller). */
  async stop(): Promise<void> {
    await this.process.stop('SIGTERM', 10000);
  }
}
