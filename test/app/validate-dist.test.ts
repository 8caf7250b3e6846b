import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { synth } from '../../app/main';
import { formatResults, validateDist } from '../../scripts/validate-dist';
import { requirePromTools, SHARED_RESULTS_ENV } from '../../tools/harness/prom-tools';
import { TS_LOADER_ARGS } from '../../tools/harness/service-process';

const ROOT = resolve(__dirname, '../..');

/** A finished child process. */
interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to completion without blocking this process (so two can run at once). */
function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    // A hang guard, not a bound on speed: one run takes about a minute in CI, and took over 120 s
    // (the guard this was) beside the rest of the suite on two cores with other work on them.
    // The tests awaiting a run allow for it (360 s).
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolvePromise({ status, stdout, stderr });
    });
  });
}

/** The command on `dir` with `env`, sharing the run's promtool and amtool results (the tests' in-process checks' too). */
const validateCommand = (dir: string, env: NodeJS.ProcessEnv) =>
  run('node', [...TS_LOADER_ARGS, 'scripts/validate-dist.ts', dir], {
    ...env,
    [SHARED_RESULTS_ENV]: process.env[SHARED_RESULTS_ENV],
  });

/** The external-kvstore variant's environment (secrets in it too, as `make secrets` would have them: the leak check searches for them). */
const EXTERNAL_ENV = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  KVSTORE_DEPLOY: 'external',
  KVSTORE_MODE: 'sentinel',
  KVSTORE_NODES: 'sentinel-1.example.com:26379,sentinel-2.example.com:26379',
  KVSTORE_SENTINEL_MASTER: 'search-master',
  KVSTORE_URL: 'rediss://:fixture-ext-url-pass-61d0@sentinel-0.example.com:26379',
  KVSTORE_SENTINEL_PASSWORD: 'fixture-ext-sentinel-pass-7e2b',
};

describe('make validate (scripts/validate-dist.ts)', () => {
  let dist: string;
  let external: string;
  // The two command runs (each seconds of promtool) start in beforeAll and run side by side,
  // and beside the in-process tests; each test awaits its own.
  let freshRun: Promise<Run>;
  let externalRuns: Promise<{ synth: Run; validate?: Run }>;

  beforeAll(() => {
    requirePromTools();
    dist = mkdtempSync(join(tmpdir(), 'svc-ai-search-dist-'));
    synth({}, dist);
    freshRun = validateCommand(dist, { PATH: process.env.PATH, HOME: process.env.HOME });
    external = mkdtempSync(join(tmpdir(), 'svc-ai-search-external-'));
    externalRuns = run('npx', ['cdk8s', 'synth', '--check-upgrade=false', '-o', external], EXTERNAL_ENV).then(
      async (synthRun) =>
        synthRun.status === 0
          ? { synth: synthRun, validate: await validateCommand(external, EXTERNAL_ENV) }
          : { synth: synthRun },
    );
    // Awaited by their tests; a test that fails first must not leave an unhandled rejection.
    freshRun.catch(() => undefined);
    externalRuns.catch(() => undefined);
  });
  afterAll(async () => {
    await Promise.allSettled([freshRun, externalRuns]);
    rmSync(dist, { recursive: true, force: true });
    rmSync(external, { recursive: true, force: true });
  });

  it('passes a fresh synth, as a command with exit status 0', async () => {
    const r = await freshRun;
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('ok   promtool test rules (54 tests)');
    expect(r.stdout).toContain('ok   amtool config routes test (41 cases)');
    // Then operator mode, synthesized from the same environment into a temp folder.
    expect(r.stdout).toContain('MONITORING_MODE=operator, synthesized into a temp folder:');
    expect(r.stdout).toMatch(/ok {3}promtool test rules on the PrometheusRule groups \(\d+ tests\)/);
    expect(r.stdout).toMatch(/ok {3}amtool config routes test, AlertmanagerConfig \(\d+ cases\)/);
    expect(r.stdout).toContain('all 18 checks passed');
    expect(r.status).toBe(0);
  }, 360_000);

  it('fails a tampered dist/, saying what is wrong', () => {
    const copy = mkdtempSync(join(tmpdir(), 'svc-ai-search-dist-'));
    try {
      for (const f of [
        '0000-namespace.k8s.yaml',
        '0001-kvstore.k8s.yaml',
        '0002-backend.k8s.yaml',
        '0003-alertmanager.k8s.yaml',
      ]) {
        writeFileSync(join(copy, f), readFileSync(join(dist, f)));
      }
      const prometheus = readFileSync(join(dist, '0004-prometheus.k8s.yaml'), 'utf8').replace(
        'targetPort: web',
        'targetPort: http',
      );
      writeFileSync(join(copy, '0004-prometheus.k8s.yaml'), prometheus);
      const results = validateDist(copy, {});
      expect(results.filter((r) => !r.ok).map((r) => r.check)).toEqual(['kubernetes references']);
      expect(formatResults(results)).toContain(
        'FAIL kubernetes references\n     Service/prometheus: port 9090 targets http',
      );
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('finds a secret value set in the environment in the files', () => {
    const results = validateDist(dist, {
      SMTP_FROM: 'alertmanager@example.com',
      SMTP_PASSWORD: 'svc-ai-search-backend',
    });
    expect(results.find((r) => r.check === 'no secret values in the output')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('SMTP_PASSWORD appears in'),
    });
  });

  it('refuses an empty folder', () => {
    const empty = mkdtempSync(join(tmpdir(), 'svc-ai-search-empty-'));
    try {
      expect(() => validateDist(empty, {})).toThrow('no manifests in');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('passes the external-kvstore variant: npx cdk8s synth with the env set into a temp folder, then the script', async () => {
    const { synth: synthRun, validate: r } = await externalRuns;
    expect(synthRun.status).toBe(0);
    expect(r?.stdout).toContain('ok   kubernetes references');
    expect(r?.stdout).toContain('ok   no secret values in the output');
    expect(r?.stdout).toContain('all 18 checks passed');
    expect(r?.status).toBe(0);
    const backend = readFileSync(join(external, '0001-backend.k8s.yaml'), 'utf8');
    expect(backend).toContain('key: kvstore-url');
    expect(backend).toContain('KVSTORE_SENTINEL_MASTER: search-master');
  }, 360_000);
});
