/**
 * The synthesized manifests read back: the YAML files of a `dist/` folder, their objects, and the
 * config documents out of the ConfigMaps. For tests, `make validate` and the harness; not shipped
 * (it was charts/manifests.ts, exported from the package root).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll, load } from 'js-yaml';
import type { AlertmanagerConfig } from '../charts/generators/alertmanager-config';
import { CONFIG_DOCUMENTS, stackNames, type StackNames } from '../charts/generators/names';
import type { PrometheusConfig } from '../charts/generators/prometheus-config';
import type { RuleFile } from '../charts/generators/rule-types';

/** A Kubernetes object as synthesized (plain JSON). */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> };
  readonly [field: string]: unknown;
}

/** The synthesized files of a folder, by file name, in `kubectl apply -f` order. */
export function readDist(dir: string): Map<string, string> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .sort();
  return new Map(files.map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

/** Every object of some YAML files, in order. */
export function parseManifests(files: Iterable<string>): Manifest[] {
  const out: Manifest[] = [];
  for (const text of files) {
    for (const doc of loadAll(text)) if (doc) out.push(doc as Manifest);
  }
  return out;
}

/** The config documents the stack puts into ConfigMaps, as text and parsed. */
export interface MonitoringDocuments {
  readonly prometheusConfig: PrometheusConfig;
  readonly rules: RuleFile;
  readonly alertmanagerConfig: AlertmanagerConfig;
  /** The exact texts, for writing to files and running the real binaries on them. */
  readonly text: { readonly prometheusConfig: string; readonly rules: string; readonly alertmanagerConfig: string };
}

function configMapEntry(manifests: readonly Manifest[], configMap: string, key: string): string {
  const cm = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === configMap);
  if (!cm) throw new Error(`no ConfigMap ${configMap} among the manifests`);
  const data = (cm.data ?? {}) as Record<string, string>;
  if (typeof data[key] !== 'string') throw new Error(`ConfigMap ${configMap} has no key ${key}`);
  return data[key];
}

/**
 * Prometheus config, rule file and Alertmanager config out of synthesized manifests: what an
 * end-to-end test runs with the real binaries (after `retarget`ing the addresses to loopback).
 * `names`: the stack's, when it has a `NAME_PREFIX`.
 */
export function monitoringDocuments(
  manifests: readonly Manifest[],
  names: StackNames = stackNames(),
): MonitoringDocuments {
  const d = CONFIG_DOCUMENTS;
  const text = {
    prometheusConfig: configMapEntry(manifests, names.prometheusConfig, d.prometheusConfig.key),
    rules: configMapEntry(manifests, names.prometheusRules, d.prometheusRules.key),
    alertmanagerConfig: configMapEntry(manifests, names.alertmanagerConfig, d.alertmanagerConfig.key),
  };
  return {
    prometheusConfig: load(text.prometheusConfig) as PrometheusConfig,
    rules: load(text.rules) as RuleFile,
    alertmanagerConfig: load(text.alertmanagerConfig) as AlertmanagerConfig,
    text,
  };
}
