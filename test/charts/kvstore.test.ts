import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Testing } from 'cdk8s';
import { kvstoreConfig, Kvstore, KVSTORE_READY_SCRIPT, KVSTORE_START_SCRIPT } from '../../charts';
import { requireBinary } from '../../tools/harness/binary';
import { freePort, waitForPort } from '../../tools/harness/ports';
import { policyEffect } from '../../service/kvstore/eviction-policy';
import { memoryChart, type Json } from './fixtures/stack';

function synth(): Json[] {
  const chart = memoryChart();
  new Kvstore(chart, 'kvstore', {
    image: 'redis:7.2-alpine',
    storage: '2Gi',
    config: kvstoreConfig(),
    clientSelector: { 'app.kubernetes.io/name': 'backend', 'app.kubernetes.io/part-of': 'svc-ai-search-backend' },
  });
  return Testing.synth(chart);
}

const of = (objects: Json[], kind: string): Json => objects.find((o) => o.kind === kind);

describe('Kvstore', () => {
  const objects = synth();
  const sts = of(objects, 'StatefulSet');
  const container = sts.spec.template.spec.containers[0];

  it('creates a ConfigMap, Service kvstore:6379, a StatefulSet and a NetworkPolicy', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ConfigMap/kvstore-config',
      'Service/kvstore',
      'StatefulSet/kvstore',
      'NetworkPolicy/kvstore',
    ]);
    expect(of(objects, 'Service').spec.ports).toEqual([
      { name: 'redis', port: 6379, targetPort: 'redis', protocol: 'TCP' },
    ]);
  });

  it('keeps its data on a PersistentVolumeClaim with append-only persistence', () => {
    expect(sts.spec.volumeClaimTemplates).toEqual([
      {
        metadata: { name: 'data', labels: sts.spec.selector.matchLabels },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } },
      },
    ]);
    expect(container.volumeMounts).toContainEqual({ name: 'data', mountPath: '/data' });
    expect(of(objects, 'ConfigMap').data['redis.conf']).toContain('appendonly yes\n');
  });

  it('never evicts the content keys when full: volatile-lru, which the service starts with (issue 37)', () => {
    const conf = of(objects, 'ConfigMap').data['redis.conf'] as string;
    const policy = /^maxmemory-policy (\S+)$/m.exec(conf)?.[1];
    // Only keys with a TTL (the rate limiter's) are evicted; the content keys have none, so when
    // those are gone Redis refuses writes (503) as noeviction would. The service's own startup
    // check (eviction-policy.ts) judges it the same way.
    expect(policy).toBe('volatile-lru');
    expect(policyEffect(policy!)).toBe('none');
    expect(conf).toMatch(/^maxmemory 192mb$/m);
  });

  it('takes its password from the Secret, required', () => {
    expect(container.env).toEqual([
      {
        name: 'KVSTORE_PASSWORD',
        valueFrom: { secretKeyRef: { name: 'svc-ai-search-secrets', key: 'kvstore-password' } },
      },
    ]);
    expect(container.command).toEqual(['sh', '-c', KVSTORE_START_SCRIPT]);
  });

  it('admits only the backend’s pods, on 6379', () => {
    expect(of(objects, 'NetworkPolicy').spec).toEqual({
      podSelector: { matchLabels: sts.spec.selector.matchLabels },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [
            {
              podSelector: {
                matchLabels: {
                  'app.kubernetes.io/name': 'backend',
                  'app.kubernetes.io/part-of': 'svc-ai-search-backend',
                },
              },
            },
          ],
          ports: [{ port: 6379, protocol: 'TCP' }],
        },
      ],
    });
  });

  it('runs restricted as the image’s redis user', () => {
    expect(sts.spec.template.spec.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 999,
      runAsGroup: 1000,
      fsGroup: 1000,
      // cdk8s-plus writes the Kubernetes default out.
      fsGroupChangePolicy: 'Always',
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
  });

  describe('the start script with a real redis-server', () => {
    let dir: string;
    let port: number;
    let script: string;

    beforeAll(async () => {
      requireBinary('redis-server');
      dir = mkdtempSync(join(tmpdir(), 'kvstore-script-'));
      port = await freePort();
      // Only what the cluster provides differently: the mount paths and the port.
      writeFileSync(
        join(dir, 'redis.conf'),
        kvstoreConfig().replace('dir /data', `dir ${dir}`).replace('port 6379', `port ${port}\nbind 127.0.0.1`),
      );
      script = KVSTORE_START_SCRIPT.replace('/etc/redis/', `${dir}/`);
    });

    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('starts with the password from the environment, off the command line, with the AOF on', async () => {
      const password = 'fixture-kv-9c8b7a';
      const child = spawn('sh', ['-c', script], {
        env: { PATH: process.env.PATH, KVSTORE_PASSWORD: password },
        stdio: 'ignore',
      });
      try {
        await waitForPort(port);
        const cli = (args: string[], auth?: string) =>
          spawnSync('redis-cli', ['-p', String(port), ...args], {
            encoding: 'utf8',
            env: { PATH: process.env.PATH, ...(auth ? { REDISCLI_AUTH: auth } : {}) },
          }).stdout.trim();
        expect(cli(['ping'])).toContain('NOAUTH');
        expect(cli(['ping'], password)).toBe('PONG');
        expect(cli(['config', 'get', 'appendonly'], password)).toBe('appendonly\nyes');
        expect(cli(['config', 'get', 'maxmemory-policy'], password)).toBe('maxmemory-policy\nvolatile-lru');
        const ready = spawnSync('sh', ['-c', KVSTORE_READY_SCRIPT.replace('redis-cli', `redis-cli -p ${port}`)], {
          env: { PATH: process.env.PATH, KVSTORE_PASSWORD: password },
        });
        expect(ready.status).toBe(0);
        // exec: redis-server is the process itself, and its arguments hold no password.
        const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8');
        expect(cmdline).toContain('redis-server');
        expect(cmdline).not.toContain(password);
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    });

    it('refuses to start without a password', () => {
      const r = spawnSync('sh', ['-c', script], {
        env: { PATH: process.env.PATH, KVSTORE_PASSWORD: '' },
        encoding: 'utf8',
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('KVSTORE_PASSWORD is empty');
    });
  });
});
