import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { synth } from '../../app/main';
import { formatResults, validateDist } from '../../scripts/validate-dist';
import { requirePromTools } from '../harness/prom-tools';

const ROOT = resolve(__dirname, '../..');

describe('make validate (scripts/validate-dist.ts)', () => {
  let dist: string;

  beforeAll(() => {
    requirePromTools();
    dist = mkdtempSync(join(tmpdir(), 'svc-ai-search-dist-'));
    synth({}, dist);
  });
  afterAll(() => rmSync(dist, { recursive: true, force: true }));

  it('passes a fresh synth, as a command with exit status 0', () => {
    const r = spawnSync('node', ['-r', 'ts-node/register/transpile-only', 'scripts/validate-dist.ts', dist], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      encoding: 'utf8',
      timeout: 120000,
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('ok   promtool test rules (50 tests)');
    expect(r.stdout).toContain('ok   amtool config routes test (39 cases)');
    // Then operator mode, synthesized from the same environment into a temp folder.
    expect(r.stdout).toContain('MONITORING_MODE=operator, synthesized into a temp folder:');
    expect(r.stdout).toMatch(/ok {3}promtool test rules on the PrometheusRule groups \(\d+ tests\)/);
    expect(r.stdout).toMatch(/ok {3}amtool config routes test, AlertmanagerConfig \(\d+ cases\)/);
    expect(r.stdout).toContain('all 18 checks passed');
    expect(r.status).toBe(0);
  });

  it('fails a tampered dist/, saying what is wrong', () => {
    const copy = mkdtempSync(join(tmpdir(), 'svc-ai-search-dist-'));
    try {
      for (const f of ['0000-namespace.k8s.yaml', '0001-kvstore.k8s.yaml', '0002-backend.k8s.yaml', '0003-alertmanager.k8s.yaml']) {
        writeFileSync(join(copy, f), readFileSync(join(dist, f)));
      }
      const prometheus = readFileSync(join(dist, '0004-prometheus.k8s.yaml'), 'utf8').replace('targetPort: web', 'targetPort: http');
      writeFileSync(join(copy, '0004-prometheus.k8s.yaml'), prometheus);
      const results = validateDist(copy, {});
      expect(results.filter((r) => !r.ok).map((r) => r.check)).toEqual(['kubernetes references']);
      expect(formatResults(results)).toContain('FAIL kubernetes references\n     Service/prometheus: port 9090 targets http');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('finds a secret value set in the environment in the files', () => {
    const results = validateDist(dist, { SMTP_FROM: 'alertmanager@example.com', SMTP_PASSWORD: 'svc-ai-search-backend' });
    expect(results.find((r) => r.check === 'no secret values in the output')).toMatchObject({ ok: false, detail: expect.stringContaining('SMTP_PASSWORD appears in') });
  });

  it('refuses an empty folder', () => {
    const empty = mkdtempSync(join(tmpdir(), 'svc-ai-search-empty-'));
    try {
      expect(() => validateDist(empty, {})).toThrow('no manifests in');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('passes the external-kvstore variant: npx cdk8s synth with the env set into a temp folder, then the script', () => {
    const out = mkdtempSync(join(tmpdir(), 'svc-ai-search-external-'));
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KVSTORE_DEPLOY: 'external',
      KVSTORE_MODE: 'sentinel',
      KVSTORE_NODES: 'sentinel-1.example.com:26379,sentinel-2.example.com:26379',
      KVSTORE_SENTINEL_MASTER: 'search-master',
      // Secrets in the environment too, as `make secrets` would have them: the leak check searches for them.
      KVSTORE_URL: 'rediss://:fixture-ext-url-pass-61d0@sentinel-0.example.com:26379',
      KVSTORE_SENTINEL_PASSWORD: 'fixture-ext-sentinel-pass-7e2b',
    };
    try {
      const synthRun = spawnSync('npx', ['cdk8s', 'synth', '--check-upgrade=false', '-o', out], { cwd: ROOT, env, encoding: 'utf8', timeout: 120000 });
      expect(synthRun.status).toBe(0);
      const r = spawnSync('node', ['-r', 'ts-node/register/transpile-only', 'scripts/validate-dist.ts', out], { cwd: ROOT, env, encoding: 'utf8', timeout: 120000 });
      expect(r.stdout).toContain('ok   kubernetes references');
      expect(r.stdout).toContain('ok   no secret values in the output');
      expect(r.stdout).toContain('all 18 checks passed');
      expect(r.status).toBe(0);
      const backend = readFileSync(join(out, '0001-backend.k8s.yaml'), 'utf8');
      expect(backend).toContain('key: kvstore-url');
      expect(backend).toContain('KVSTORE_SENTINEL_MASTER: search-master');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 240000);
});
