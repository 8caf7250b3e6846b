import { SettingsError, type SettingsIssue } from './errors';
import { ParseFailure } from './parsers';
import { ENVIRONMENTS, type Environment } from './sections/service';
import {
  DEFAULT_SETTINGS,
  VARIABLES,
  invalidValue,
  parseSettings,
  type Settings,
  type SettingsInput,
} from './settings';
import { getPath, setPath, type VariableSpec } from './variables';

/** An environment: `process.env` or a test's literal. */
export type Env = Readonly<Record<string, string | undefined>>;

const NODE_ENV_ALIASES: Record<string, Environment> = {
  development: 'development',
  dev: 'development',
  test: 'testing',
  testing: 'testing',
  staging: 'staging',
  production: 'production',
  prod: 'production',
};

/**
 * Reads every variable of `VARIABLES` from `env` into a `SettingsInput`. Unset or empty
 * variables are left out, so defaults apply. Throws `SettingsError` naming each bad variable,
 * its value (hidden for secrets) and what is accepted.
 */
export function settingsInputFromEnv(env: Env): SettingsInput {
  const input: Record<string, unknown> = {};
  const issues: SettingsIssue[] = [];
  for (const spec of VARIABLES) {
    const raw = env[spec.name];
    if (raw === undefined || raw.trim() === '') continue;
    try {
      setPath(input, spec.path, spec.parser.parse(raw));
    } catch (e) {
      if (!(e instanceof ParseFailure)) throw e;
      issues.push(invalidValue(spec, raw));
    }
  }
  if ((env.ENVIRONMENT ?? '').trim() === '' && env.NODE_ENV) {
    const mapped = NODE_ENV_ALIASES[env.NODE_ENV.trim().toLowerCase()];
    if (mapped && ENVIRONMENTS.includes(mapped)) setPath(input, 'service.environment', mapped);
  }
  if (issues.length) throw new SettingsError(issues);
  return input as SettingsInput;
}

/** `parseSettings(settingsInputFromEnv(env))`: what the service and `cdk8s synth` both call. */
export function loadSettings(env: Env = process.env): Settings {
  return parseSettings(settingsInputFromEnv(env));
}

/** Formats a typed value back into its environment-variable string. */
export function formatValue(value: unknown): string {
  if (Array.isArray(value)) return value.map(formatValue).join(',');
  // A label pair (`PROMETHEUS_RULE_LABELS`) is written as its variable spells it: key=value.
  if (typeof value === 'object' && value !== null && 'name' in value && 'value' in value)
    return `${String(value.name)}=${String(value.value)}`;
  return String(value);
}

/**
 * The environment that reproduces `settings` in the service: every non-secret, non-synth-only
 * variable with a value, but those of a feature that is off (`dormantWhen`: their defaults are
 * the service's too; with `unlessChanged`, one set to another value is written all the same).
 * The charts put this in the backend's ConfigMap; secrets go by reference.
 */
export function serviceEnvironment(settings: Settings): Record<string, string> {
  const out: Record<string, string> = {};
  for (const spec of VARIABLES) {
    if (spec.secret || spec.synthOnly) continue;
    const value = getPath(settings, spec.path);
    const dormant = spec.dormantWhen;
    if (
      dormant &&
      getPath(settings, dormant.path) === dormant.value &&
      !(dormant.unlessChanged && formatValue(value) !== formatValue(getPath(DEFAULT_SETTINGS, spec.path)))
    )
      continue;
    if (value !== undefined) out[spec.name] = formatValue(value);
  }
  return out;
}

/** The spec of a variable by name; throws for unknown names (a typo in code, not in input). */
export function variableSpec(name: string): VariableSpec {
  const spec = VARIABLES.find((v) => v.name === name);
  if (!spec) throw new Error(`no such setting variable: ${name}`);
  return spec;
}

/** A copy of `settings` with every secret replaced by `<hidden>`, safe to log. */
export function redactSettings(settings: Settings): Settings {
  const copy = JSON.parse(JSON.stringify(settings)) as Record<string, unknown>;
  for (const spec of VARIABLES) {
    if (spec.secret && getPath(copy, spec.path) !== undefined) setPath(copy, spec.path, '<hidden>');
  }
  // Derived copies of secret values.
  if (getPath(copy, 'rateLimit.effective.storeUrl') !== undefined)
    setPath(copy, 'rateLimit.effective.storeUrl', '<hidden>');
  return copy as unknown as Settings;
}
