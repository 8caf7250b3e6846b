import { ConfigMap } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { DashboardJson } from './generators/dashboard';
import { stackNames, type StackNames } from './generators/names';
import { PART_OF } from './labels';

/** The label the kube-prometheus-stack Grafana sidecar loads dashboards from (its default `grafana_dashboard: "1"`). */
export const GRAFANA_DASHBOARD_LABEL = { grafana_dashboard: '1' } as const;

/** What `GrafanaDashboard` writes. */
export interface GrafanaDashboardProps {
  /** The dashboard (from `grafanaDashboard`). */
  readonly dashboard: DashboardJson;
  /** Key of the JSON in the ConfigMap (from `dashboardFileName`). */
  readonly fileName: string;
  /** Object names of the stack. @default stackNames('') */
  readonly names?: StackNames;
  /** `app.kubernetes.io/version` (the backend's, from `imageVersion`). @default none */
  readonly version?: string;
}

/** The dashboard's JSON as written to the ConfigMap and to `dist/grafana/`: stable, indented. */
export function dashboardText(dashboard: DashboardJson): string {
  return `${JSON.stringify(dashboard, null, 2)}\n`;
}

/**
 * A ConfigMap holding the Grafana dashboard, labelled `grafana_dashboard: "1"` so the Grafana
 * sidecar of kube-prometheus-stack (or any sidecar watching that label) loads it.
 */
export class GrafanaDashboard extends Construct {
  /** The cdk8s-plus ConfigMap (mount it, or add keys, from a consumer's Chart). */
  readonly configMap: ConfigMap;
  /** The JSON text in the ConfigMap, for writing beside the manifests. */
  readonly text: string;

  constructor(scope: Construct, id: string, props: GrafanaDashboardProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    this.text = dashboardText(props.dashboard);
    this.configMap = new ConfigMap(this, 'config-map', {
      metadata: {
        name: names.grafanaDashboard,
        labels: {
          'app.kubernetes.io/part-of': PART_OF,
          'app.kubernetes.io/instance': names.instance,
          'app.kubernetes.io/component': 'dashboard',
          ...(props.version ? { 'app.kubernetes.io/version': props.version } : {}),
          'app.kubernetes.io/managed-by': 'cdk8s',
          ...GRAFANA_DASHBOARD_LABEL,
        },
      },
      data: { [props.fileName]: this.text },
    });
  }
}
