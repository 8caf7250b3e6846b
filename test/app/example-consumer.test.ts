import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parseManifests, readDist } from '../../tools/read-manifests';
import { buildTestApp, type TestApp } from '../helpers/app';
import { withBuiltPackage } from '../helpers/package-build';

const ROOT = resolve(__dirname, '../..');

/**
 * examples/consumer as a platform team would run it: the package from its `npm pack` tarball
 * (unpacked where `npm install` puts it; its dependencies resolve from this repository's
 * node_modules, as they would from the consumer's), compiled with strict tsc, then synthesized;
 * and its API caller (search.ts, on `svc-ai-search-backend/client`) run against a real service.
 * The same tsc run compiles calls the client's types must refuse (`@ts-expect-error`: a call they
 * accepted would fail it). The scratch folder is inside the repository (.tmp/, git-ignored) so
 * that resolution works offline.
 */
const COMPILE_CHECKS = `import { createClient } from 'svc-ai-search-backend/client';
const api = createClient({ baseUrl: 'http://localhost:8080' });
export async function checks(): Promise<void> {
  // @ts-expect-error sort is one of the sorts (q may be absent since issue 40: a placeholder search)
  await api.search({ sort: 'sideways' });
  // @ts-expect-error limit is a number
  await api.search({ q: 'x', limit: '5' });
  // @ts-expect-error type is one of the item types
  await api.ingest({ type: 'podcast', title: 't', body: '' });
  const found = await api.search({ q: 'x' });
  // @ts-expect-error a result has no body
  found.results[0].body;
  const answer = await api.chat({ message: 'x' });
  // @ts-expect-error sources are objects
  answer.sources[0].toFixed();
}
`;
describe('examples/consumer, built from npm pack', () => {
  let work = '';
  beforeAll(() => {
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    work = mkdtempSync(join(ROOT, '.tmp', 'example-'));
    const out = withBuiltPackage(() =>
      execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    );
    const [{ filename }] = JSON.parse(out) as Array<{ filename: string }>;
    const app = join(work, 'consumer');
    cpSync(join(ROOT, 'examples/consumer'), app, { recursive: true });
    const pkg = join(app, 'node_modules/svc-ai-search-backend');
    mkdirSync(pkg, { recursive: true });
    execFileSync('tar', ['-xzf', join(work, filename), '-C', pkg, '--strip-components=1']);
    writeFileSync(join(app, 'checks.ts'), COMPILE_CHECKS);
    writeFileSync(
      join(app, 'tsconfig.checks.json'),
      JSON.stringify({ extends: './tsconfig.json', files: ['main.ts', 'search.ts', 'checks.ts'] }),
    );
    execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.checks.json'], { cwd: app, stdio: 'pipe' });
    execFileSync(process.execPath, ['build/main.js', join(work, 'dist')], { cwd: app, stdio: 'pipe' });
  }, 180_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('synthesizes two prefixed stacks into the team’s Chart and namespace, with its annotation', () => {
    const files = readDist(join(work, 'dist'));
    expect([...files.keys()]).toEqual(['search-platform.k8s.yaml']);
    const manifests = parseManifests(files.values());
    expect(manifests.some((m) => m.kind === 'Namespace')).toBe(false);
    expect(manifests.every((m) => m.metadata.namespace === 'search-platform')).toBe(true);
    const deployments = manifests
      .filter((m) => m.kind === 'Deployment')
      .map((m) => m.metadata.name)
      .sort();
    expect(deployments).toEqual([
      'blue-alertmanager',
      'blue-backend',
      'blue-prometheus',
      'green-alertmanager',
      'green-backend',
      'green-prometheus',
    ]);
    const blue = manifests.find((m) => m.kind === 'Deployment' && m.metadata.name === 'blue-backend') as
      { metadata: { annotations?: Record<string, string> } } | undefined;
    expect(blue?.metadata.annotations).toEqual({ 'platform.example.com/owner': 'search-team' });
  });

  it('installed only what the tarball ships', () => {
    const installed = readdirSync(join(work, 'consumer/node_modules/svc-ai-search-backend')).sort();
    expect(installed).toEqual(['README.md', 'bin', 'build', 'docs', 'package.json', 'service']);
    // Of service/, only the search page's static files.
    expect(readdirSync(join(work, 'consumer/node_modules/svc-ai-search-backend/service'))).toEqual(['web']);
  });

  it('calls a real service with the typed client: stores, finds and asks about a note', async () => {
    const token = 'example-consumer-token-0123456789';
    const t: TestApp = await buildTestApp({ service: { apiToken: token }, rateLimit: { enabled: false } });
    const server: Server = t.app.listen(0, '127.0.0.1');
    try {
      await new Promise((r) => server.once('listening', r));
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      // Not execFileSync: the service answers from this process's event loop.
      const { stdout } = await promisify(execFile)(process.execPath, ['build/search.js', url], {
        cwd: join(work, 'consumer'),
        env: { ...process.env, API_TOKEN: token },
      });
      expect(JSON.parse(stdout)).toEqual({
        stored: 'platform-notes',
        results: ['platform-notes'],
        sources: ['platform-notes'],
      });
      // Without the token the write is refused, and the refusal is typed (status, code).
      const refused = await promisify(execFile)(process.execPath, ['build/search.js', url], {
        cwd: join(work, 'consumer'),
        env: { ...process.env, API_TOKEN: '' },
      }).catch((e: { stderr: string }) => e);
      expect(refused.stderr).toMatch(/^401 unauthorized/);
    } finally {
      await new Promise((r) => server.close(r));
      await t.close();
    }
  });
});
