import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synth, DASHBOARD_DIR } from '../../app/main';
import { grafanaDashboard } from '../../charts';
import { find, synthStack, type Json } from './fixtures/stack';

describe('GrafanaDashboard', () => {
  it.each(['standalone', 'operator'])(
    'ships the dashboard in a ConfigMap labelled grafana_dashboard: "1" in %s mode',
    (mode) => {
      const stack = synthStack({ MONITORING_MODE: mode });
      const cm: Json = find(stack.manifests, 'ConfigMap', 'grafana-dashboard');
      expect(cm.metadata.labels).toMatchObject({
        grafana_dashboard: '1',
        'app.kubernetes.io/part-of': 'svc-ai-search-backend',
      });
      expect(Object.keys(cm.data)).toEqual(['svc-ai-search-backend.json']);
      expect(JSON.parse(cm.data['svc-ai-search-backend.json'])).toEqual(grafanaDashboard(stack.settings));
    },
  );

  it('follows the name prefix', () => {
    const stack = synthStack({ NAME_PREFIX: 'team-a-' });
    const cm: Json = find(stack.manifests, 'ConfigMap', 'team-a-grafana-dashboard');
    expect(Object.keys(cm.data)).toEqual(['team-a-svc-ai-search-backend.json']);
  });

  it('synth writes the same JSON to dist/grafana/ for importing by hand, out of kubectl apply -f dist/’s way', () => {
    const out = mkdtempSync(join(tmpdir(), 'svc-ai-search-dash-'));
    try {
      synth({}, out, () => undefined);
      const file = join(out, DASHBOARD_DIR, 'svc-ai-search-backend.json');
      expect(existsSync(file)).toBe(true);
      // kubectl apply -f dist/ reads .json files too, but not in subfolders (no -R).
      expect(readdirSync(out).filter((f) => f.endsWith('.json'))).toEqual([]);
      const stack = synthStack({});
      const cm: Json = find(stack.manifests, 'ConfigMap', 'grafana-dashboard');
      expect(readFileSync(file, 'utf8')).toBe(cm.data['svc-ai-search-backend.json']);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
