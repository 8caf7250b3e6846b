import type { Severity } from './rule-types';
import { SERVICE_NAME } from '../../contract';

/** One alert as the Alertmanager API takes it (spec §6.3). */
export interface PostableAlert {
  readonly labels: { readonly alertname: string; readonly severity: string; readonly service: string };
  readonly annotations: { readonly summary: string; readonly description: string };
}

/** Options of `testAlert`. */
export interface TestAlertOptions {
  /** @default 'TestAlert' */
  readonly alertname?: string;
  /** @default 'warning' (reaches the warning and backend-team receivers) */
  readonly severity?: Severity;
}

/**
 * The body of spec §6.3: one alert labelled as this service's. Without `endsAt` Alertmanager
 * resolves it after `resolve_timeout` (5m), so a test leaves nothing behind.
 */
export function testAlert(options: TestAlertOptions = {}): PostableAlert[] {
  const alertname = options.alertname ?? 'TestAlert';
  const severity = options.severity ?? 'warning';
  return [
    {
      labels: { alertname, severity, service: SERVICE_NAME },
      annotations: {
        summary: `Test alert from ${SERVICE_NAME}`,
        description: `A ${severity} test alert posted by make test-alert to check the routing and receivers; it resolves by itself in 5 minutes.`,
      },
    },
  ];
}
