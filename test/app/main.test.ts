import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { load } from 'js-yaml';
import { synth } from '../../app/main';
import { TS_LOADER_ARGS } from '../../tools/harness/service-process';
import { monitoringDocuments, parseManifests, readDist } from '../../tools/read-manifests';
import { referenceProblems } from '../../tools/validate/references';
import { schemaProblems } from '../../tools/validate/schemas';
import { SettingsError, type Env } from '../../configs';
import { SECRET_ENV, SECRET_VALUES } from '../charts/fixtures/secrets';

const ROOT = resolve(__dirname, '../..');

function synthToDir(env: Env): { dir: string; files: Map<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ai-search-app-'));
  synth(env, dir);
  return { dir, files: readDist(dir) };
}

describe('app/main synth', () => {
  const dirs: string[] = [];
  const run = (env: Env) => {
    const r = synthToDir(env);
    dirs.push(r.dir);
    return r.files;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  const files = run({});

  it('writes the six files of the stack', () => {
    expect([...files.keys()]).toEqual([
      '0000-namespace.k8s.yaml',
      '0001-kvstore.k8s.yaml',
      '0002-backend.k8s.yaml',
      '0003-alertmanager.k8s.yaml',
      '0004-prometheus.k8s.yaml',
      '0005-dashboard.k8s.yaml',
    ]);
  });

  it.each([
    '0000-namespace.k8s.yaml',
    '0001-kvstore.k8s.yaml',
    '0002-backend.k8s.yaml',
    '0003-alertmanager.k8s.yaml',
    '0004-prometheus.k8s.yaml',
    '0005-dashboard.k8s.yaml',
  ])('synthesizes %s as snapshotted', (name) => {
    expect(files.get(name)).toMatchSnapshot();
  });

  it('synthesizes operator mode (every destination on) as snapshotted: the custom resources in place of Prometheus and Alertmanager, no secret value', () => {
    const env = {
      ...SECRET_ENV,
      MONITORING_MODE: 'operator',
      PROMETHEUS_RULE_LABELS: 'release=kube-prometheus-stack',
      WEBHOOK_URL: 'https://hooks.example.com/alerts',
    };
    const op = run(env);
    expect([...op.keys()]).toEqual([
      '0000-namespace.k8s.yaml',
      '0001-kvstore.k8s.yaml',
      '0002-backend.k8s.yaml',
      '0003-monitoring.k8s.yaml',
      '0004-dashboard.k8s.yaml',
    ]);
    const text = op.get('0003-monitoring.k8s.yaml') ?? '';
    for (const v of SECRET_VALUES) expect(text).not.toContain(v);
    expect(parseManifests([text]).map((m) => `${m.apiVersion} ${m.kind}`)).toEqual([
      'monitoring.coreos.com/v1 ServiceMonitor',
      'monitoring.coreos.com/v1 PrometheusRule',
      'monitoring.coreos.com/v1alpha1 AlertmanagerConfig',
    ]);
    expect(text).toMatchSnapshot();
  });

  it('synthesizes the Alertmanager file with every destination on as snapshotted, without a secret value', () => {
    const text =
      run({ ...SECRET_ENV, WEBHOOK_URL: 'https://hooks.example.com/alerts' }).get('0003-alertmanager.k8s.yaml') ?? '';
    for (const v of SECRET_VALUES) expect(text).not.toContain(v);
    expect(text).toMatchSnapshot();
  });

  it('synthesizes an external Redis Cluster (KVSTORE_DEPLOY=external) as snapshotted: no kvstore file, the URL by Secret reference, no secret value', () => {
    const env = {
      ...SECRET_ENV,
      KVSTORE_DEPLOY: 'external',
      KVSTORE_MODE: 'cluster',
      KVSTORE_NODES: 'redis-1.example.com:6379,redis-2.example.com:6379',
    };
    const ext = run(env);
    expect([...ext.keys()]).toEqual([
      '0000-namespace.k8s.yaml',
      '0001-backend.k8s.yaml',
      '0002-alertmanager.k8s.yaml',
      '0003-prometheus.k8s.yaml',
      '0004-dashboard.k8s.yaml',
    ]);
    const all = [...ext.values()].join('\n');
    for (const v of SECRET_VALUES) expect(all).not.toContain(v);
    const text = ext.get('0001-backend.k8s.yaml') ?? '';
    expect(text).toContain('KVSTORE_MODE: cluster');
    expect(text).toContain('key: kvstore-url');
    expect(text).not.toContain('KVSTORE_URL: ');
    expect(text).toMatchSnapshot();
  });

  it('is deterministic: two synths are byte-identical', () => {
    expect(run({})).toEqual(files);
  });

  it('puts a service variable given at synth time into the backend’s config', () => {
    const manifests = parseManifests(run({ RATE_LIMIT_SEARCH_REQUESTS: '120' }).values());
    const cm = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 'backend-config') as unknown as {
      data: Record<string, string>;
    };
    expect(cm.data.RATE_LIMIT_SEARCH_REQUESTS).toBe('120');
  });

  it('changes the scrape interval with PROMETHEUS_SCRAPE_INTERVAL=30s', () => {
    const docs = monitoringDocuments(parseManifests(run({ PROMETHEUS_SCRAPE_INTERVAL: '30s' }).values()));
    expect(docs.prometheusConfig.global.scrape_interval).toBe('30s');
    expect((load(docs.text.prometheusConfig) as { global: { scrape_interval: string } }).global.scrape_interval).toBe(
      '30s',
    );
    expect(monitoringDocuments(parseManifests(files.values())).prometheusConfig.global.scrape_interval).toBe('15s');
  });

  it('mounts the synonyms file named at synth time from a ConfigMap, changing nothing else but the backend', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-ai-search-synonyms-'));
    dirs.push(dir);
    const path = join(dir, 'synonyms.txt');
    writeFileSync(path, 'car, automobile\n');
    const withSynonyms = run({ SEARCH_SYNONYMS_FILE: path });
    const manifests = parseManifests(withSynonyms.values()) as unknown as Array<{
      kind: string;
      metadata: { name: string };
      data?: Record<string, string>;
    }>;
    const cm = (name: string) => manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === name);
    expect(cm('backend-synonyms')?.data).toEqual({ 'synonyms.txt': 'car, automobile\n' });
    expect(cm('backend-config')?.data?.SEARCH_SYNONYMS_FILE).toBe('/etc/svc-ai-search/synonyms/synonyms.txt');
    // The Kubernetes schemas take the new objects, and the pod's ConfigMap volume refers to one that exists.
    expect(schemaProblems(parseManifests(withSynonyms.values()))).toEqual([]);
    expect(referenceProblems(parseManifests(withSynonyms.values()))).toEqual([]);
    const changed = [...withSynonyms.keys()].filter((f) => withSynonyms.get(f) !== files.get(f));
    expect(changed).toEqual([[...files.keys()].find((f) => f.includes('backend'))]);
    writeFileSync(path, 'car, automobile\n\n=> truck\n');
    expect(() => synth({ SEARCH_SYNONYMS_FILE: path }, join(tmpdir(), 'never-written'))).toThrow(
      `SEARCH_SYNONYMS_FILE=${JSON.stringify(path)} line 3: "=> truck" has nothing before =>`,
    );
  });

  it('fails on a bad setting, naming it', () => {
    expect(() => synth({ BACKEND_REPLICAS: 'many' }, join(tmpdir(), 'never-written'))).toThrow(SettingsError);
    expect(() => synth({ BACKEND_REPLICAS: 'many' }, join(tmpdir(), 'never-written'))).toThrow(
      'BACKEND_REPLICAS="many" is not valid',
    );
  });
});

describe('npx cdk8s synth', () => {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME };

  it('synthesizes through cdk8s.yaml with settings from the environment', () => {
    const out = mkdtempSync(join(tmpdir(), 'svc-ai-search-cli-'));
    try {
      const r = spawnSync('npx', ['cdk8s', 'synth', '--check-upgrade=false', '--output', out], {
        cwd: ROOT,
        env: { ...env, RATE_LIMIT_SEARCH_REQUESTS: '120', PROMETHEUS_SCRAPE_INTERVAL: '30s' },
        encoding: 'utf8',
        timeout: 60000,
      });
      expect(r.status).toBe(0);
      const docs = monitoringDocuments(parseManifests(readDist(out).values()));
      expect(docs.prometheusConfig.global.scrape_interval).toBe('30s');
      expect(readDist(out).get('0002-backend.k8s.yaml')).toContain('RATE_LIMIT_SEARCH_REQUESTS: "120"');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('exits non-zero with a message naming a bad setting', () => {
    const r = spawnSync('node', [...TS_LOADER_ARGS, 'app/main.ts'], {
      cwd: ROOT,
      env: { ...env, CDK8S_OUTDIR: join(tmpdir(), 'never-written'), PROMETHEUS_SCRAPE_INTERVAL: 'often' },
      encoding: 'utf8',
      timeout: 60000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      'cdk8s synth: Invalid settings: PROMETHEUS_SCRAPE_INTERVAL="often" is not valid: expected a duration such as 15s',
    );
  });
});
