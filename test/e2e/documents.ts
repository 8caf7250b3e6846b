/** Comparing config documents with their loopback rewrites set aside. */

/** A parsed YAML mapping. */
export type Json = Record<string, unknown>;

/** Drops the keys at the given dotted paths (`*` = every array element or object value). */
export function without(doc: unknown, paths: readonly string[]): unknown {
  const copy = JSON.parse(JSON.stringify(doc)) as unknown;
  const drop = (node: unknown, keys: string[]): void => {
    if (!node || typeof node !== 'object' || !keys.length) return;
    const [k, ...rest] = keys;
    const children = k === '*' ? Object.values(node as Json) : [(node as Json)[k]];
    if (!rest.length && k !== '*') delete (node as Json)[k];
    else for (const c of children) drop(c, rest);
  };
  for (const p of paths) drop(copy, p.split('.'));
  return copy;
}

/** The document without its `*_file` keys, and the paths where they were. */
export function withoutSecretFiles(doc: unknown): { rest: unknown; fileKeys: string[] } {
  const rest = JSON.parse(JSON.stringify(doc)) as unknown;
  const fileKeys: string[] = [];
  const walk = (n: unknown, path: string) => {
    if (Array.isArray(n)) n.forEach((c, i) => walk(c, `${path}[${i}]`));
    else if (n && typeof n === 'object') {
      for (const k of Object.keys(n)) {
        if (k.endsWith('_file')) {
          fileKeys.push(`${path}.${k}`);
          delete (n as Json)[k];
        } else walk((n as Json)[k], `${path}.${k}`);
      }
    }
  };
  walk(rest, '');
  return { rest, fileKeys };
}
