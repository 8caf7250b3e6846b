import { Duration, JsonPatch } from 'cdk8s';
import { Probe, k8s, type Container, type Workload } from 'cdk8s-plus-27';
import { patchContainer } from './container-patch';

/** Options of an HTTP probe. */
export interface HttpProbeOptions {
  /** Time between probes. */
  readonly period: Duration;
  /** Time before one probe counts as failed. @default 3 s */
  readonly timeout?: Duration;
  /** Failed probes in a row before the kubelet acts. @default 3 */
  readonly failureThreshold?: number;
}

/** An HTTP GET probe of `path`; `probesOnNamedPort` points it at the container's named port. */
export function httpProbe(path: string, opts: HttpProbeOptions): Probe {
  return Probe.fromHttpGet(path, {
    periodSeconds: opts.period,
    timeoutSeconds: opts.timeout ?? Duration.seconds(3),
    failureThreshold: opts.failureThreshold ?? 3,
  });
}

/** A container's probe field and the action it holds. */
export type ProbeField = readonly ['readinessProbe' | 'livenessProbe' | 'startupProbe', 'httpGet' | 'tcpSocket'];

/**
 * Points probes of the workload's `container` (found by name) at its port named `port`. cdk8s-plus
 * writes port numbers; a named port follows the container when its number changes (`PORT`).
 */
export function probesOnNamedPort(
  workload: Workload,
  container: Container,
  port: string,
  probes: readonly ProbeField[],
): void {
  // Patches pass through the L1 serializer, which drops a bare string where it expects IntOrString.
  patchContainer(workload, container, (c) =>
    probes.map(([field, action]) =>
      JsonPatch.replace(`${c}/${field}/${action}/port`, k8s.IntOrString.fromString(port)),
    ),
  );
}
