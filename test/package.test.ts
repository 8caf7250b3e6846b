import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TS_LOADER_ARGS } from '../tools/harness/service-process';
import { withBuiltPackage } from './helpers/package-build';

const ROOT = resolve(__dirname, '..');

/** Runs `script` in a fresh node loading TypeScript (`TS_LOADER_ARGS`), in an empty folder; returns what it printed and left behind. */
function inCleanProcess(script: string): {
  status: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  left: string[];
} {
  const cwd = mkdtempSync(join(tmpdir(), 'svc-ai-search-import-'));
  try {
    const r = spawnSync(process.execPath, [...TS_LOADER_ARGS, '-e', script], {
      cwd,
      encoding: 'utf8',
      // A server or a timer would keep the process alive: the timeout turns that into a failure.
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '' },
    });
    return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, left: readdirSync(cwd) };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

describe('the library entry (index.ts)', () => {
  it('starts nothing and writes nothing when imported in a clean process', () => {
    const entry = JSON.stringify(join(ROOT, 'index.ts'));
    const r = inCleanProcess(
      `const lib = require(${entry});` +
        `process.stdout.write(JSON.stringify({ resources: process.getActiveResourcesInfo(), exports: Object.keys(lib) }));`,
    );
    expect({ status: r.status, signal: r.signal, stderr: r.stderr, left: r.left }).toEqual({
      status: 0,
      signal: null,
      stderr: '',
      left: [],
    });
    const out = JSON.parse(r.stdout) as { resources: string[]; exports: string[] };
    // Only the process's own stdio handles may be open: no server socket, no timer.
    expect(out.resources.filter((k) => k !== 'TTYWrap' && k !== 'PipeWrap')).toEqual([]);
    expect(out.exports).toEqual(
      expect.arrayContaining([
        'SearchBackendStack',
        'loadStackSettings',
        'loadSettings',
        'prometheusConfig',
        'alertmanagerConfig',
        'alertRules',
      ]),
    );
  });
});

describe('npm pack', () => {
  let files: string[] = [];
  beforeAll(() => {
    // --ignore-scripts: prepack would build again and print into the JSON on stdout.
    const out = withBuiltPackage(() =>
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    );
    const [pack] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
    files = pack.files.map((f) => f.path);
  }, 120_000);

  it('ships the built library with its declarations, the service entry, the bin and the docs', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'docs/stack.md',
        'bin/svc-ai-search-backend.js',
        'build/index.js',
        'build/index.d.ts',
        'build/charts/stack.d.ts',
        'build/configs/index.d.ts',
        'build/service/main.js',
        'build/package.json',
        // The search page's static files and the demo corpus (README.md, docs/) are read at run time.
        'service/web/assets/index.html',
        'service/web/assets/app.js',
      ]),
    );
  });

  it('ships no tests, benches, sources or scripts', () => {
    const stray = files.filter(
      (f) =>
        (/^(test|bench|examples|scripts|service|charts|configs|app)\//.test(f) &&
          !f.startsWith('service/web/assets/')) ||
        f.startsWith('build/test/') ||
        f.startsWith('build/bench/') ||
        f.startsWith('build/scripts/') ||
        (f.endsWith('.ts') && !f.endsWith('.d.ts')),
    );
    expect(stray).toEqual([]);
  });

  it('points main, types and exports at files it ships', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      main: string;
      types: string;
      exports: Record<string, { types: string; default: string }>;
    };
    expect(files).toEqual(expect.arrayContaining([pkg.main, pkg.types]));
    for (const entry of ['.', './service', './client', './contract']) {
      expect(files).toEqual(
        expect.arrayContaining([pkg.exports[entry].types.slice(2), pkg.exports[entry].default.slice(2)]),
      );
    }
  });

  it('takes cdk8s, constructs and cdk8s-plus-27 from the consumer: its public constructs are theirs', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(['cdk8s', 'cdk8s-plus-27', 'constructs']);
    expect(Object.keys(pkg.dependencies).filter((d) => d in pkg.peerDependencies)).toEqual([]);
  });
});
