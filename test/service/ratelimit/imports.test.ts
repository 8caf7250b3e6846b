import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');

/** Every source file reachable from `entry` through relative imports (type-only ones included). */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(/from '(\.[^']*)'/g)) {
      const base = join(dirname(file), m[1]);
      const target = [`${base}.ts`, join(base, 'index.ts')].find((f) => existsSync(f));
      if (target) stack.push(target);
    }
  }
  return seen;
}

describe('module structure', () => {
  it('the rate limiter does not import deps.ts (deps.ts imports the limiter, never the reverse)', () => {
    const files = [...reachable(join(ROOT, 'service/ratelimit/index.ts'))].map((f) => f.slice(ROOT.length + 1));
    expect(files).toContain('service/ratelimit/tiers.ts');
    expect(files).not.toContain('service/deps.ts');
  });
});
