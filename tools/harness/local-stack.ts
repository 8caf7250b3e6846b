import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ADDRESSES, SECRETS } from '../../charts/generators/names';
import { AlertmanagerServer } from './alertmanager';
import {
  configDocuments,
  loopbackDocuments,
  synthesize,
  type FastIntervals,
  type LoopbackDocuments,
  type Manifest,
} from './manifests';
import { freePort, preferredPort } from './ports';
import { PrometheusServer } from './prometheus';
import { RedisServer } from './redis';
import { ServiceProcess } from './service-process';
import { WebhookReceiver } from './webhook-receiver';

/** Environment variables, as a child process gets them. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Paths of the webhook receiver, one per kind of destination, so a delivery says which route sent it. */
export const RECEIVER_PATHS = {
  /** Chat (Slack-compatible) messages: every channel posts here; the body names the channel. */
  chat: '/chat',
  /** The generic webhook of critical alerts (WEBHOOK_URL). */
  webhook: '/webhook',
  /** The heartbeat receiver (HEARTBEAT_URL): the always-firing Watchdog. */
  heartbeat: '/heartbeat',
} as const;

/** Intervals of the e2e test: alerts fire in seconds, not minutes. */
export const TEST_INTERVALS: FastIntervals = {
  scrapeInterval: '1s',
  ruleFor: '2s',
  groupWait: '1s',
  repeatInterval: '1m',
  alertResendDelay: '1s',
};

/** Human-friendly ports for `make up`; taken ones fall back to free ports. */
export const INTERACTIVE_PORTS = { service: 8080, prometheus: 9090, alertmanager: 9093, redis: 6379 } as const;

/** How to start the stack. */
export interface LocalStackOptions {
  /** Shorten intervals (tests). @default undefined: intervals as generated */
  readonly fast?: FastIntervals;
  /**
   * Service processes, each its own scrape target of the backend job, as pods are (the synth
   * gets `BACKEND_REPLICAS` to match). @default 1
   */
  readonly replicas?: number;
  /** Ports to prefer; each falls back to a free port when taken. @default all free ports */
  readonly ports?: Partial<Record<'service' | 'prometheus' | 'alertmanager' | 'redis', number>>;
  /** Environment both `cdk8s synth` and the service start from. @default PATH and HOME only */
  readonly baseEnv?: Env;
  /** Extra service settings (e.g. rate-limit tiers). */
  readonly serviceEnv?: Env;
  /** Extra synth settings. */
  readonly synthEnv?: Env;
  /** Progress lines (the interactive stack prints them). @default silent */
  readonly log?: (line: string) => void;
  /** Keep the work folder after `stop` (to look at the files). @default false */
  readonly keepFiles?: boolean;
}

/** A minimal environment: settings come only from what the caller passes. */
export function cleanEnv(): Env {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LANG: process.env.LANG };
}

/** The secret values the harness mounts (test values, random per run). */
export interface StackSecrets {
  /** `Authorization: Bearer <this>` on the generic webhook. */
  readonly webhookBearerToken: string;
}

/** Marks an error that already carries the logs. */
const REPORTED = Symbol('stack logs reported');

/** Something that can be stopped, for teardown in reverse start order. */
type Stoppable = { name: string; stop: () => Promise<void> };

/**
 * The whole stack on loopback, as one object: the service (ts-node), `redis-server`, the
 * manifests of `npx cdk8s synth`, `prometheus` and `prometheus-alertmanager` running the
 * documents those manifests carry, and a webhook receiver standing in for chat and the generic
 * webhook. Used by the e2e test (fast intervals, free ports) and by `make up` (scripts/up.ts:
 * generated intervals, the usual ports).
 */
export class LocalStack {
  private stopped = false;

  private constructor(
    readonly workDir: string,
    readonly receiver: WebhookReceiver,
    readonly redis: RedisServer,
    readonly services: readonly ServiceProcess[],
    readonly prometheus: PrometheusServer,
    readonly alertmanager: AlertmanagerServer,
    readonly manifests: readonly Manifest[],
    readonly documents: LoopbackDocuments,
    readonly secrets: StackSecrets,
    private readonly stoppables: readonly Stoppable[],
    private readonly keepFiles: boolean,
  ) {
    process.once('exit', this.killOnExit);
  }

  /** The first replica: the one every single-service scenario talks to. */
  get service(): ServiceProcess {
    return this.services[0];
  }

  /** If the test process exits without `stop` (a crash, a forced exit), no binary outlives it. */
  private readonly killOnExit = () => {
    for (const p of [
      ...this.services.map((x) => x.process),
      this.redis.process,
      this.prometheus.process,
      this.alertmanager.process,
    ])
      p.killNow();
  };

  /** Starts everything; on any failure stops what already started and throws with the logs. */
  static async start(opts: LocalStackOptions = {}): Promise<LocalStack> {
    const log = opts.log ?? (() => undefined);
    const base = opts.baseEnv ?? cleanEnv();
    const workDir = mkdtempSync(join(tmpdir(), 'svc-stack-'));
    const started: Stoppable[] = [];
    const processes: Array<{ name: string; tail: () => string }> = [];
    let synthesis: Promise<Manifest[]> | undefined;
    const cleanup = async () => {
      await synthesis?.catch(() => undefined); // let a running synth finish before its folder goes
      for (const s of [...started].reverse()) await s.stop().catch(() => undefined);
      if (!opts.keepFiles) rmSync(workDir, { recursive: true, force: true });
    };
    try {
      const receiver = await WebhookReceiver.start();
      started.push({ name: 'receiver', stop: () => receiver.close() });
      const replicas = opts.replicas ?? 1;
      const ports = {
        service: await preferredPort(opts.ports?.service),
        otherReplicas: await Promise.all(Array.from({ length: replicas - 1 }, () => freePort())),
        prometheus: await preferredPort(opts.ports?.prometheus),
        alertmanager: await preferredPort(opts.ports?.alertmanager),
        redis: await preferredPort(opts.ports?.redis),
        // Nothing listens here: e-mail deliveries fail fast instead of looking up smtp.example.com.
        smtp: await freePort(),
      };
      const secrets: StackSecrets = { webhookBearerToken: `e2e-${randomBytes(12).toString('hex')}` };

      // Synthesis runs while Redis and the service start: it is the slowest step.
      const synthEnv: Env = {
        ...base,
        // The local stack runs its own Prometheus and Alertmanager: operator mode has none to run.
        MONITORING_MODE: 'standalone',
        BACKEND_REPLICAS: String(replicas),
        ...opts.synthEnv,
        WEBHOOK_URL: receiver.url(RECEIVER_PATHS.webhook),
        HEARTBEAT_URL: receiver.url(RECEIVER_PATHS.heartbeat),
        // Secrets are only checked for presence at synth; their values are the files below.
        WEBHOOK_BEARER_TOKEN: 'mounted-from-secret-file',
        CHAT_WEBHOOK_URL: receiver.url(RECEIVER_PATHS.chat),
        SMTP_HOST: '127.0.0.1',
        SMTP_PORT: String(ports.smtp),
      };
      log('synthesizing manifests (npx cdk8s synth)…');
      synthesis = synthesize(join(workDir, 'dist'), synthEnv);
      synthesis.catch(() => undefined); // awaited below; avoid an unhandled rejection meanwhile

      log(`starting redis-server on ${ports.redis}…`);
      const redis = await RedisServer.start({ port: ports.redis });
      started.push({ name: 'redis', stop: () => redis.stop() });
      processes.push({ name: 'redis-server', tail: () => redis.process.tail() });
      const dataDir = join(workDir, 'data');
      mkdirSync(dataDir);
      // The replicas start together (each is seconds of module loading), as pods of a Deployment do.
      const starting = [ports.service, ...ports.otherReplicas].map(async (port, i) => {
        const name = i === 0 ? 'service' : `service-${i}`;
        const replicaData = i === 0 ? dataDir : join(workDir, `data-${i}`);
        mkdirSync(replicaData, { recursive: true });
        log(`starting the ${name} on ${port}…`);
        const service = await ServiceProcess.start({
          port,
          env: {
            ENVIRONMENT: 'development',
            DEMO_CONTENT: 'false',
            LOG_LEVEL: 'info',
            ...base,
            DATA_DIR: replicaData,
            KVSTORE_URL: redis.url,
            ...opts.serviceEnv,
          },
        });
        started.push({ name, stop: () => service.stop() });
        processes.push({ name, tail: () => service.process.tail() });
        return service;
      });
      const services = await allStarted(starting);

      const manifests = await synthesis;
      const documents = loopbackDocuments(configDocuments(manifests), {
        addresses: {
          [ADDRESSES.backend]: `127.0.0.1:${ports.service}`,
          [ADDRESSES.alertmanager]: `127.0.0.1:${ports.alertmanager}`,
          [ADDRESSES.prometheus]: `127.0.0.1:${ports.prometheus}`,
        },
        podTargets: services.map((x) => `127.0.0.1:${x.port}`),
        rulesDir: join(workDir, 'prometheus', 'rules'),
        secretsDir: join(workDir, 'alertmanager', 'secrets'),
        secrets: {
          [SECRETS.alertmanager.keys.webhookBearerToken]: secrets.webhookBearerToken,
          [SECRETS.alertmanager.keys.chatWebhookUrl]: receiver.url(RECEIVER_PATHS.chat),
        },
        fast: opts.fast,
      });
      const promConfig = join(workDir, 'prometheus', 'prometheus.yml');
      const amConfig = join(workDir, 'alertmanager', 'alertmanager.yml');
      writeFiles({
        ...documents.ruleFiles,
        ...documents.secretFiles,
        [promConfig]: documents.prometheusConfig,
        [amConfig]: documents.alertmanagerConfig,
      });

      log(`starting prometheus-alertmanager on ${ports.alertmanager} and prometheus on ${ports.prometheus}…`);
      // Independent: Prometheus retries Alertmanager until it answers, so both start at once.
      const [alertmanager, prometheus] = await allStarted([
        AlertmanagerServer.start({
          configFile: amConfig,
          dir: join(workDir, 'alertmanager'),
          port: ports.alertmanager,
        }).then((am) => {
          started.push({ name: 'alertmanager', stop: () => am.stop() });
          processes.push({ name: 'alertmanager', tail: () => am.process.tail() });
          return am;
        }),
        PrometheusServer.start({
          configFile: promConfig,
          dir: join(workDir, 'prometheus'),
          port: ports.prometheus,
          alertResendDelay: opts.fast?.alertResendDelay,
        }).then((p) => {
          started.push({ name: 'prometheus', stop: () => p.stop() });
          return p;
        }),
      ] as const);

      return new LocalStack(
        workDir,
        receiver,
        redis,
        services,
        prometheus,
        alertmanager,
        manifests,
        documents,
        secrets,
        started,
        !!opts.keepFiles,
      );
    } catch (e) {
      const logs = processes.map((p) => `--- ${p.name} (last lines) ---\n${p.tail()}`).join('\n');
      await cleanup();
      const msg = e instanceof Error ? e.message : String(e);
      throw new Error(`the local stack did not start: ${msg}${logs ? `\n\n${logs}` : ''}`);
    }
  }

  /** The last lines of every process's output and what the receiver got: appended to failures. */
  report(lines = 40): string {
    const parts = [
      ...this.services.map(
        (s, i) => `--- service ${i} (${s.running ? 'running' : s.process.exitStatus}) ---\n${s.process.tail(lines)}`,
      ),
      `--- redis-server (${this.redis.process.running ? 'running' : this.redis.process.exitStatus}) ---\n${this.redis.process.tail(10)}`,
      `--- prometheus ---\n${this.prometheus.process.tail(lines)}`,
      `--- alertmanager ---\n${this.alertmanager.process.tail(lines)}`,
      `--- webhook receiver: ${this.receiver.deliveries.length} deliveries ---\n${this.receiver.deliveries
        .slice(-30)
        .map((d) => `${d.path} ${summarizeDelivery(d.body)}`)
        .join('\n')}`,
    ];
    return parts.join('\n');
  }

  /**
   * Runs one step of a scenario (or a whole scenario); when it fails, the error names the step and
   * carries the binaries' logs (once, however deeply steps nest), so the CI output says what
   * Prometheus, Alertmanager and the service were doing.
   */
  async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      const reported = (err as { [REPORTED]?: boolean })[REPORTED] === true;
      const message = `step "${name}" failed: ${err.message}${reported ? '' : `\n\n${this.report()}`}`;
      // Jest prints `stack`, which V8 built with the old message: rewrite both.
      if (err.stack?.includes(err.message)) err.stack = err.stack.replace(err.message, message);
      else err.stack = `${message}\n${err.stack ?? ''}`;
      err.message = message;
      (err as { [REPORTED]?: boolean })[REPORTED] = true;
      throw err;
    }
  }

  /** Stops everything in reverse start order (each at most once) and removes the work folder. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    process.removeListener('exit', this.killOnExit);
    const errors: string[] = [];
    for (const s of [...this.stoppables].reverse()) {
      await s.stop().catch((e: unknown) => errors.push(`${s.name}: ${e instanceof Error ? e.message : String(e)}`));
    }
    if (!this.keepFiles) rmSync(this.workDir, { recursive: true, force: true });
    if (errors.length) throw new Error(`stopping the stack: ${errors.join('; ')}`);
  }
}

/**
 * Waits for every start (each registers itself for cleanup when it succeeds), then throws the
 * first failure: no process is left starting unseen when the stack gives up.
 */
async function allStarted<T extends readonly unknown[]>(
  starts: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(starts);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}

function writeFiles(files: Readonly<Record<string, string>>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content, { mode: 0o600 });
  }
}

/** One line about a notification: chat channel and title, or webhook status and alert names. */
export function summarizeDelivery(body: unknown): string {
  const b = (body ?? {}) as {
    channel?: string;
    attachments?: Array<{ title?: string }>;
    status?: string;
    alerts?: Array<{ labels?: Record<string, string> }>;
  };
  if (b.channel !== undefined) return `${b.channel}: ${b.attachments?.[0]?.title ?? ''}`;
  if (b.alerts) return `${b.status}: ${b.alerts.map((a) => a.labels?.alertname).join(', ')}`;
  return JSON.stringify(body).slice(0, 200);
}
