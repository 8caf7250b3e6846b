import { Construct } from 'constructs';
import {
  ServiceMonitor,
  ServiceMonitorSpecEndpointsRelabelingsAction,
  ServiceMonitorSpecEndpointsScheme,
  ServiceMonitorSpecServiceDiscoveryRole,
} from '../../imports/service-monitor-monitoring.coreos.com';
import { COMPONENTS, stackNames, type StackNames } from '../generators/names';
import { selectorLabels } from '../labels';
import { operatorLabels } from './operator-labels';
import { PATHS, SCRAPE_JOB } from '../../contract';

/** Name of the backend Service's port the ServiceMonitor scrapes. */
export const BACKEND_PORT_NAME = 'http';

/** What `BackendServiceMonitor` writes. */
export interface BackendServiceMonitorProps {
  /** Namespace of the backend's Service (the only one the monitor looks in). */
  readonly namespace: string;
  /** Scrape interval (`PROMETHEUS_SCRAPE_INTERVAL`), e.g. `15s`. */
  readonly interval: string;
  /** Extra labels the cluster's Prometheus selects ServiceMonitors by. @default none */
  readonly labels?: Readonly<Record<string, string>>;
  /** Object names of the stack. @default stackNames('') */
  readonly names?: StackNames;
  /** `app.kubernetes.io/version` of the object (the backend's image version). @default none */
  readonly version?: string;
}

/**
 * A prometheus-operator ServiceMonitor for the backend: the Service `backend` (with the name
 * prefix), path `/api/metrics/prometheus`, one target per pod through the Service's Endpoints,
 * and the job renamed to `svc-ai-search-backend`, the name the rules and the spec use (the
 * operator would name it after the Service).
 */
export class BackendServiceMonitor extends Construct {
  /** The ServiceMonitor object. */
  readonly resource: ServiceMonitor;

  constructor(scope: Construct, id: string, props: BackendServiceMonitorProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    this.resource = new ServiceMonitor(this, 'resource', {
      metadata: { name: names.backend, labels: operatorLabels(names, props.labels, props.version) },
      spec: {
        selector: { matchLabels: selectorLabels(COMPONENTS.backend, names.instance) },
        namespaceSelector: { matchNames: [props.namespace] },
        serviceDiscoveryRole: ServiceMonitorSpecServiceDiscoveryRole.ENDPOINTS,
        endpoints: [
          {
            port: BACKEND_PORT_NAME,
            path: PATHS.metrics,
            scheme: ServiceMonitorSpecEndpointsScheme.HTTP,
            interval: props.interval,
            relabelings: [
              // The headless backend-pods Service carries the same labels: its endpoints would scrape every pod twice.
              {
                action: ServiceMonitorSpecEndpointsRelabelingsAction.KEEP,
                sourceLabels: ['__meta_kubernetes_service_name'],
                regex: names.backend,
              },
              {
                action: ServiceMonitorSpecEndpointsRelabelingsAction.REPLACE,
                targetLabel: 'job',
                replacement: SCRAPE_JOB,
              },
            ],
          },
        ],
      },
    });
  }
}
