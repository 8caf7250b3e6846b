import { ParseFailure, type Parser } from '../parsers';

/** One Kubernetes label, `name=value`. */
export interface LabelPair {
  readonly name: string;
  readonly value: string;
}

/** A label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters. */
const KEY = /^(?:[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** A label value: empty, or at most 63 characters starting and ending alphanumeric. */
const VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

function checked(name: unknown, value: unknown): LabelPair {
  if (typeof name !== 'string' || typeof value !== 'string' || !KEY.test(name) || !VALUE.test(value))
    throw new ParseFailure();
  return { name, value };
}

/** `key=value` with a valid Kubernetes label key and value (e.g. `release=kube-prometheus-stack`). */
export const LABEL_PAIR: Parser<LabelPair> = {
  accepted: 'key=value with a Kubernetes label key and value (e.g. release=kube-prometheus-stack)',
  check: (v) =>
    typeof v === 'object' && v !== null
      ? checked((v as { name?: unknown }).name, (v as { value?: unknown }).value)
      : checked(undefined, undefined),
  parse: (raw) => {
    const at = raw.indexOf('=');
    if (at < 0) throw new ParseFailure();
    return checked(raw.slice(0, at).trim(), raw.slice(at + 1).trim());
  },
};

/** Label pairs as a Kubernetes `labels` map. */
export function labelMap(pairs: readonly LabelPair[]): Record<string, string> {
  return Object.fromEntries(pairs.map((p) => [p.name, p.value]));
}
