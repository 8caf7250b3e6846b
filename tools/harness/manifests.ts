import { spawn } from 'node:child_process';
import { basename, join } from 'node:path';
import { dump, load } from 'js-yaml';
import { monitoringDocuments, parseManifests, readDist, type Manifest } from '../read-manifests';
import { CONFIG_DOCUMENTS, SECRETS } from '../../charts/generators/names';
import { REPO_ROOT } from './service-process';

export type { Manifest } from '../read-manifests';

/**
 * Runs `npx cdk8s synth --output <outDir>` in the repository, exactly as a user does, with `env`
 * as the whole environment (settings are read from it), and returns every object it wrote, in
 * `kubectl apply -f` order.
 */
export async function synthesize(
  outDir: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Manifest[]> {
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('npx', ['cdk8s', 'synth', '--output', outDir], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (b: Buffer) => output.push(b.toString()));
    child.stderr.on('data', (b: Buffer) => output.push(b.toString()));
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`npx cdk8s synth failed (exit ${code}):\n${output.join('')}`);
  return parseManifests(readDist(outDir).values());
}

/** The config documents the stack's ConfigMaps carry, as text: what Prometheus and Alertmanager would read. */
export interface ConfigDocuments {
  /** `prometheus.yml`. */
  readonly prometheusConfig: string;
  /** Rule files by file name (their ConfigMap key). */
  readonly ruleFiles: Readonly<Record<string, string>>;
  /** `alertmanager.yml`. */
  readonly alertmanagerConfig: string;
}

/** Pulls the config documents out of the synthesized ConfigMaps (the charts' `monitoringDocuments`). */
export function configDocuments(manifests: readonly Manifest[]): ConfigDocuments {
  const { text } = monitoringDocuments(manifests);
  return {
    prometheusConfig: text.prometheusConfig,
    ruleFiles: { [CONFIG_DOCUMENTS.prometheusRules.key]: text.rules },
    alertmanagerConfig: text.alertmanagerConfig,
  };
}

// ---------------------------------------------------------------------------------------------
// Loopback rewrites: only what a cluster provides differently. Each one is listed in `rewrites`
// so the test and `make up` can say exactly what changed.
// ---------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** Durations of the test run, shortened so alerts fire in seconds instead of minutes. */
export interface FastIntervals {
  /** Prometheus `scrape_interval` and `evaluation_interval` (and `scrape_timeout` if set). @example '1s' */
  readonly scrapeInterval: string;
  /** Every rule's `for`. @example '2s' */
  readonly ruleFor: string;
  /** Alertmanager `group_wait` and `group_interval` wherever set. @example '1s' */
  readonly groupWait: string;
  /** Alertmanager `repeat_interval` wherever set. @example '1m' */
  readonly repeatInterval: string;
  /**
   * Prometheus's `--rules.alert.resend-delay` (a flag, not in prometheus.yml): how soon a firing
   * alert is sent to Alertmanager again. Prometheus does not retry a failed send, and it starts
   * beside Alertmanager: the Watchdog's first send, at the first evaluation, can come before
   * Alertmanager listens, and the next came a minute later (Prometheus's default). @example '1s'
   */
  readonly alertResendDelay: string;
}

/** How the documents are adapted to loopback. */
export interface LoopbackOptions {
  /** In-cluster `host:port` → loopback `host:port` (e.g. `backend:8080` → `127.0.0.1:41234`). */
  readonly addresses: Readonly<Record<string, string>>;
  /**
   * Loopback `host:port` of each backend replica: a job that discovers pods through DNS
   * (`dns_sd_configs`) gets them as static targets, one per replica, as the pods would be.
   */
  readonly podTargets?: readonly string[];
  /** Folder the rule files are written to (rule_files point there). */
  readonly rulesDir: string;
  /** Folder the Alertmanager secret files are written to (`*_file` fields point there). */
  readonly secretsDir: string;
  /** Secret file contents by their key in the Secret (e.g. `webhook-bearer-token`). */
  readonly secrets: Readonly<Record<string, string>>;
  /** Shortened intervals for a test; absent = the generated intervals stay. */
  readonly fast?: FastIntervals;
}

/** The documents to write, with the files they refer to. */
export interface LoopbackDocuments {
  readonly prometheusConfig: string;
  /** Absolute path → content. */
  readonly ruleFiles: Readonly<Record<string, string>>;
  readonly alertmanagerConfig: string;
  /** Absolute path → content: the secret files the Alertmanager config refers to. */
  readonly secretFiles: Readonly<Record<string, string>>;
  /** One line per change, e.g. `prometheus.yml: target backend:8080 -> 127.0.0.1:41234`. */
  readonly rewrites: readonly string[];
}

function mapTargets(targets: unknown, o: LoopbackOptions, where: string, rewrites: string[]): string[] {
  if (!Array.isArray(targets)) return [];
  return targets.map((t: string) => {
    const to = o.addresses[t];
    if (!to)
      throw new Error(
        `${where}: target ${t} has no loopback address; the harness knows ${Object.keys(o.addresses).join(', ')}`,
      );
    rewrites.push(`prometheus.yml: ${where} target ${t} -> ${to}`);
    return to;
  });
}

function retargetStaticConfigs(holder: Json, o: LoopbackOptions, where: string, rewrites: string[]): void {
  const statics = holder.static_configs;
  if (!Array.isArray(statics)) return;
  holder.static_configs = statics.map((sc: Json) => ({ ...sc, targets: mapTargets(sc.targets, o, where, rewrites) }));
}

/** prometheus.yml for loopback: targets, rule file paths and (fast) intervals. */
function loopbackPrometheus(
  text: string,
  ruleNames: readonly string[],
  o: LoopbackOptions,
  rewrites: string[],
): string {
  const doc = load(text) as Json;
  const global = (doc.global ??= {}) as Json;
  if (o.fast) {
    for (const k of ['scrape_interval', 'evaluation_interval'] as const) {
      rewrites.push(`prometheus.yml: global.${k} ${String(global[k] ?? 'default')} -> ${o.fast.scrapeInterval}`);
      global[k] = o.fast.scrapeInterval;
    }
    if (global.scrape_timeout !== undefined) global.scrape_timeout = o.fast.scrapeInterval;
  }
  for (const job of (doc.scrape_configs ?? []) as Json[]) {
    if (job.dns_sd_configs !== undefined) {
      if (!o.podTargets?.length)
        throw new Error(
          `prometheus.yml: job ${String(job.job_name)} discovers pods through DNS; the harness was given no pod targets`,
        );
      rewrites.push(
        `prometheus.yml: job ${String(job.job_name)} dns_sd_configs -> static targets ${o.podTargets.join(', ')}`,
      );
      delete job.dns_sd_configs;
      job.static_configs = [{ targets: [...o.podTargets] }];
      continue;
    }
    retargetStaticConfigs(job, o, `job ${String(job.job_name)}`, rewrites);
    if (o.fast && job.scrape_interval !== undefined) job.scrape_interval = o.fast.scrapeInterval;
    if (o.fast && job.scrape_timeout !== undefined) job.scrape_timeout = o.fast.scrapeInterval;
  }
  const alerting = doc.alerting as Json | undefined;
  for (const am of (alerting?.alertmanagers ?? []) as Json[]) retargetStaticConfigs(am, o, 'alerting', rewrites);
  // Each generated rule_files entry must name a rule file the ConfigMap carries (by file name).
  const generated = (doc.rule_files ?? []) as string[];
  doc.rule_files = generated.map((p) => {
    const name = basename(p);
    if (!name.includes('*') && !ruleNames.includes(name))
      throw new Error(`prometheus.yml: rule_files ${p} is not in the rules ConfigMap (${ruleNames.join(', ')})`);
    const to = join(o.rulesDir, name);
    rewrites.push(`prometheus.yml: rule_files ${p} -> ${to}`);
    return to;
  });
  return dump(doc, { lineWidth: -1 });
}

/** A rule file with every `for` shortened (fast mode only). */
function loopbackRules(name: string, text: string, o: LoopbackOptions, rewrites: string[]): string {
  if (!o.fast) return text;
  const doc = load(text) as { groups: Array<Json & { rules: Json[] }> };
  for (const group of doc.groups) {
    if (group.interval !== undefined) group.interval = o.fast.scrapeInterval;
    for (const rule of group.rules) {
      if (rule.for === undefined) continue;
      rewrites.push(`${name}: ${String(rule.alert)} for ${String(rule.for)} -> ${o.fast.ruleFor}`);
      rule.for = o.fast.ruleFor;
    }
  }
  return dump(doc, { lineWidth: -1 });
}

/** Rewrites every `*_file` under the Secret's mount path to a temp file and records its content. */
function loopbackSecretFiles(
  node: unknown,
  path: string,
  o: LoopbackOptions,
  files: Record<string, string>,
  rewrites: string[],
): void {
  if (Array.isArray(node)) {
    node.forEach((v, i) => loopbackSecretFiles(v, `${path}[${i}]`, o, files, rewrites));
    return;
  }
  if (!isObject(node)) return;
  for (const [k, v] of Object.entries(node)) {
    if (k.endsWith('_file') && typeof v === 'string' && v.startsWith(`${SECRETS.alertmanager.mountPath}/`)) {
      const key = basename(v);
      const content = o.secrets[key];
      if (content === undefined)
        throw new Error(`alertmanager.yml: ${path}.${k} reads secret ${key}, which the harness was not given`);
      const to = join(o.secretsDir, key);
      files[to] = content;
      node[k] = to;
      rewrites.push(`alertmanager.yml: ${path}.${k} ${v} -> ${to}`);
    } else {
      loopbackSecretFiles(v, path ? `${path}.${k}` : k, o, files, rewrites);
    }
  }
}

/** Shortens grouping intervals through the route tree (fast mode only). */
function loopbackRoute(route: Json, path: string, fast: FastIntervals, rewrites: string[]): void {
  for (const [k, to] of [
    ['group_wait', fast.groupWait],
    ['group_interval', fast.groupWait],
    ['repeat_interval', fast.repeatInterval],
  ] as const) {
    if (route[k] === undefined) continue;
    rewrites.push(`alertmanager.yml: ${path}.${k} ${String(route[k])} -> ${to}`);
    route[k] = to;
  }
  ((route.routes ?? []) as Json[]).forEach((r, i) => loopbackRoute(r, `${path}.routes[${i}]`, fast, rewrites));
}

/**
 * Adapts the synthesized documents to run on loopback, changing only what a cluster provides
 * differently: Service addresses become loopback ports, the mounted rule files and secret files
 * become temp files, and, for a test, intervals shrink from minutes to seconds. Everything else
 * (job name, metrics path, expressions, thresholds, labels, routes, receivers, inhibitions) is
 * exactly what `cdk8s synth` wrote.
 */
export function loopbackDocuments(docs: ConfigDocuments, o: LoopbackOptions): LoopbackDocuments {
  const rewrites: string[] = [];
  const ruleNames = Object.keys(docs.ruleFiles);
  const prometheusConfig = loopbackPrometheus(docs.prometheusConfig, ruleNames, o, rewrites);
  const ruleFiles = Object.fromEntries(
    Object.entries(docs.ruleFiles).map(([name, text]) => [
      join(o.rulesDir, name),
      loopbackRules(name, text, o, rewrites),
    ]),
  );
  const am = load(docs.alertmanagerConfig) as Json;
  const secretFiles: Record<string, string> = {};
  loopbackSecretFiles(am, '', o, secretFiles, rewrites);
  if (o.fast && isObject(am.route)) loopbackRoute(am.route, 'route', o.fast, rewrites);
  return { prometheusConfig, ruleFiles, alertmanagerConfig: dump(am, { lineWidth: -1 }), secretFiles, rewrites };
}
