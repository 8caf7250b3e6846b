import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseManifests, readDist } from '../../charts';

const ROOT = resolve(__dirname, '../..');

/**
 * examples/consumer as a platform team would run it: the package from its `npm pack` tarball
 * (unpacked where `npm install` puts it; its dependencies resolve from this repository's
 * node_modules, as they would from the consumer's), compiled with strict tsc, then synthesized.
 * The scratch folder is inside the repository (.tmp/, git-ignored) so that resolution works offline.
 */
describe('examples/consumer, built from npm pack', () => {
  let work = '';
  beforeAll(() => {
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    work = mkdtempSync(join(ROOT, '.tmp', 'example-'));
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'ignore' });
    const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const [{ filename }] = JSON.parse(out) as Array<{ filename: string }>;
    const app = join(work, 'consumer');
    cpSync(join(ROOT, 'examples/consumer'), app, { recursive: true });
    const pkg = join(app, 'node_modules/svc-ai-search-backend');
    mkdirSync(pkg, { recursive: true });
    execFileSync('tar', ['-xzf', join(work, filename), '-C', pkg, '--strip-components=1']);
    execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: app, stdio: 'pipe' });
    execFileSync(process.execPath, ['build/main.js', join(work, 'dist')], { cwd: app, stdio: 'pipe' });
  }, 180_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('synthesizes two prefixed stacks into the team’s Chart and namespace, with its annotation', () => {
    const files = readDist(join(work, 'dist'));
    expect([...files.keys()]).toEqual(['search-platform.k8s.yaml']);
    const manifests = parseManifests(files.values());
    expect(manifests.some((m) => m.kind === 'Namespace')).toBe(false);
    expect(manifests.every((m) => m.metadata.namespace === 'search-platform')).toBe(true);
    const deployments = manifests.filter((m) => m.kind === 'Deployment').map((m) => m.metadata.name).sort();
    expect(deployments).toEqual(['blue-alertmanager', 'blue-backend', 'blue-prometheus', 'green-alertmanager', 'green-backend', 'green-prometheus']);
    const blue = manifests.find((m) => m.kind === 'Deployment' && m.metadata.name === 'blue-backend') as { metadata: { annotations?: Record<string, string> } } | undefined;
    expect(blue?.metadata.annotations).toEqual({ 'platform.example.com/owner': 'search-team' });
  });

  it('installed only what the tarball ships', () => {
    const installed = readdirSync(join(work, 'consumer/node_modules/svc-ai-search-backend')).sort();
    expect(installed).toEqual(['README.md', 'bin', 'build', 'docs', 'package.json', 'service']);
    // Of service/, only the search page's static files.
    expect(readdirSync(join(work, 'consumer/node_modules/svc-ai-search-backend/service'))).toEqual(['web']);
  });
});
