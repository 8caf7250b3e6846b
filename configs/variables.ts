import type { Parser } from './parsers';

/**
 * One environment variable: where it lands in `Settings`, how it is parsed and what it means.
 * The tables in `sections/` are the only place that names variables; `loadSettings`, the
 * README table and the charts' ConfigMap all read them.
 */
export interface VariableSpec<T = unknown> {
  /** Environment variable name, exactly as the spec spells it. */
  readonly name: string;
  /** Dotted path into `Settings`, e.g. `rateLimit.tiers.ip.limit`. */
  readonly path: string;
  /** Parses the string and checks typed values. */
  readonly parser: Parser<T>;
  /** One line for the README. */
  readonly description: string;
  /** Never logged, never written to a manifest, ConfigMap or snapshot. */
  readonly secret?: boolean;
  /** Read by `cdk8s synth` only; the running service ignores it. */
  readonly synthOnly?: boolean;
  /** A secret URL whose only secret part is its password: errors show it with the password masked. */
  readonly secretIsPassword?: boolean;
  /**
   * Left out of the service's environment (the ConfigMap) while the setting at `path` is
   * `value`: a feature that is off adds nothing to the manifests. With `unlessChanged`, a value
   * other than the default is written all the same: the variable also applies without the
   * feature (the vector length and hybrid ranking of client-provided vectors, with no embedder).
   */
  readonly dormantWhen?: DormantWhen;
}

/** See `VariableSpec.dormantWhen`. */
export interface DormantWhen {
  readonly path: string;
  readonly value: string;
  readonly unlessChanged?: boolean;
}

/** Shorthand for a `VariableSpec` literal. */
export function variable<T>(
  name: string,
  path: string,
  parser: Parser<T>,
  description: string,
  flags: {
    secret?: boolean;
    synthOnly?: boolean;
    secretIsPassword?: boolean;
    dormantWhen?: DormantWhen;
  } = {},
): VariableSpec<T> {
  return { name, path, parser, description, ...flags };
}

/** Reads a dotted path from a nested object. */
export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** Writes a dotted path into a nested object, creating intermediate objects. */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let cur = obj;
  for (const key of keys.slice(0, -1)) {
    if (cur[key] === undefined || cur[key] === null || typeof cur[key] !== 'object') cur[key] = {};
    cur = cur[key] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1]] = value;
}
