import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alertmanagerConfig, loadStackSettings, testAlert, toYaml } from '../../charts';
import { postAlerts, testAlertRequest } from '../../scripts/test-alert';
import { ManagedProcess, requireBinary } from '../../tools/harness/binary';
import { freePort, waitForPort } from '../../tools/harness/ports';
import { SECRET_ENV } from '../charts/fixtures/secrets';

describe('make test-alert (scripts/test-alert.ts)', () => {
  describe('against a real Alertmanager 0.25 running the generated config', () => {
    let dir: string;
    let am: ManagedProcess;
    let url: string;

    beforeAll(async () => {
      requireBinary('prometheus-alertmanager');
      dir = mkdtempSync(join(tmpdir(), 'svc-ai-search-am-'));
      // Every destination on, and none of its secret files present: Alertmanager must still start.
      const config = alertmanagerConfig(loadStackSettings({ ...SECRET_ENV, WEBHOOK_URL: 'http://127.0.0.1:9/hook' }));
      writeFileSync(join(dir, 'alertmanager.yml'), toYaml(config));
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      am = new ManagedProcess('alertmanager', 'prometheus-alertmanager', [
        `--config.file=${join(dir, 'alertmanager.yml')}`,
        `--storage.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--cluster.listen-address=',
      ]);
      am.start();
      await waitForPort(port);
    });

    afterAll(async () => {
      await am?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('starts without the secret files and answers ready', async () => {
      const res = await fetch(`${url}/-/ready`);
      expect(res.status).toBe(200);
    });

    it('posts the §6.3 body to /api/v1/alerts, and Alertmanager holds the alert', async () => {
      const r = await postAlerts(`${url}/`, testAlert());
      expect(r).toEqual({ endpoint: `${url}/api/v1/alerts`, status: 200 });
      const alerts = (await (await fetch(`${url}/api/v2/alerts`)).json()) as Array<{
        labels: Record<string, string>;
        receivers: Array<{ name: string }>;
      }>;
      const mine = alerts.find((a) => a.labels.alertname === 'TestAlert');
      expect(mine?.labels).toEqual({ alertname: 'TestAlert', severity: 'warning', service: 'svc-ai-search-backend' });
      expect(mine?.receivers.map((x) => x.name).sort()).toEqual(['backend-team', 'warning']);
    });
  });

  describe('against servers without v1', () => {
    let server: Server;
    let url: string;
    const seen: string[] = [];
    let v2Status = 200;

    beforeAll(async () => {
      server = createServer((req, res) => {
        seen.push(`${req.method} ${req.url}`);
        const status = req.url === '/api/v1/alerts' ? 410 : v2Status;
        res.writeHead(status).end(status === 200 ? '' : 'bad alert');
      });
      const port = await freePort();
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
      url = `http://127.0.0.1:${port}`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('falls back to /api/v2/alerts when v1 is gone', async () => {
      seen.length = 0;
      expect(await postAlerts(url, testAlert())).toEqual({ endpoint: `${url}/api/v2/alerts`, status: 200 });
      expect(seen).toEqual(['POST /api/v1/alerts', 'POST /api/v2/alerts']);
    });

    it('reports any other failure with the server’s answer', async () => {
      v2Status = 400;
      await expect(postAlerts(url, testAlert())).rejects.toThrow(`POST ${url}/api/v2/alerts answered 400: bad alert`);
      v2Status = 200;
    });
  });

  describe('options', () => {
    it('needs ALERTMANAGER_URL and says how to get one', () => {
      expect(() => testAlertRequest({})).toThrow('set ALERTMANAGER_URL');
      expect(() => testAlertRequest({ ALERTMANAGER_URL: 'localhost 9093' })).toThrow('is not a URL');
    });

    it('sends a warning TestAlert by default, or what is asked', () => {
      expect(testAlertRequest({ ALERTMANAGER_URL: 'http://localhost:9093' }).alerts).toEqual(testAlert());
      const r = testAlertRequest({
        ALERTMANAGER_URL: 'http://localhost:9093',
        TEST_ALERT_SEVERITY: 'CRITICAL',
        TEST_ALERT_NAME: 'BackendDown',
      });
      expect(r.alerts[0].labels).toEqual({
        alertname: 'BackendDown',
        severity: 'critical',
        service: 'svc-ai-search-backend',
      });
      expect(() =>
        testAlertRequest({ ALERTMANAGER_URL: 'http://localhost:9093', TEST_ALERT_SEVERITY: 'page' }),
      ).toThrow('TEST_ALERT_SEVERITY');
    });

    it('carries labels alertname, severity, service and annotations summary, description (spec §6.3)', () => {
      const [a] = testAlert();
      expect(Object.keys(a.labels)).toEqual(['alertname', 'severity', 'service']);
      expect(Object.keys(a.annotations)).toEqual(['summary', 'description']);
    });
  });
});
