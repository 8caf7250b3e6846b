import { VARIABLES, type Env } from '../../configs';

/** Values shorter than this are not searched for: "1" or "yes" would match anywhere. */
const MIN_SECRET_LENGTH = 6;

/**
 * The values of every secret variable set in `env` (and the password inside a secret URL)
 * that occur in any of `texts`. Empty means no leak. Messages name the variable and the file,
 * never the value.
 */
export function secretLeaks(texts: ReadonlyMap<string, string>, env: Env): string[] {
  const problems: string[] = [];
  for (const spec of VARIABLES) {
    if (!spec.secret) continue;
    const raw = env[spec.name]?.trim();
    if (!raw) continue;
    const needles = [raw];
    try {
      const password = decodeURIComponent(new URL(raw).password);
      if (password) needles.push(password);
    } catch {
      // not a URL: the whole value is the secret
    }
    for (const needle of needles.filter((n) => n.length >= MIN_SECRET_LENGTH)) {
      for (const [file, text] of texts) {
        if (text.includes(needle)) problems.push(`the value of ${spec.name} appears in ${file}`);
      }
    }
  }
  return problems;
}
