/** The Grafana dashboard the synth shipped, read back from its ConfigMap, as queries Prometheus can run. */
import { concreteQuery, dashboardQueries, stackNames, type DashboardJson } from '../../charts';
import type { Manifest } from '../../tools/harness/manifests';

/** One panel query: as shipped, and with Grafana's macros replaced. */
export interface PanelQuery {
  readonly panel: string;
  readonly refId: string;
  readonly expr: string;
  /** `$__rate_interval` → `window`. */
  readonly concrete: string;
}

/** Every query of the dashboard ConfigMap among `manifests` (the stack's default names). */
export function dashboardPanelQueries(manifests: readonly Manifest[], window = '5m'): PanelQuery[] {
  const name = stackNames().grafanaDashboard;
  const cm = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === name);
  if (!cm) throw new Error(`no ConfigMap ${name} among the synthesized manifests`);
  const data = (cm as { data?: Record<string, string> }).data ?? {};
  const [text] = Object.values(data);
  return dashboardQueries(JSON.parse(text) as DashboardJson).map((q) => ({
    ...q,
    concrete: concreteQuery(q.expr, window),
  }));
}
