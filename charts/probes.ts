import { k8s } from 'cdk8s-plus-27';

/** Options of an HTTP probe. */
export interface HttpProbeOptions {
  /** Seconds between probes. */
  readonly periodSeconds: number;
  /** Seconds before one probe counts as failed. @default 3 */
  readonly timeoutSeconds?: number;
  /** Failed probes in a row before the kubelet acts. @default 3 */
  readonly failureThreshold?: number;
}

/** An HTTP GET probe on the container's named port. */
export function httpProbe(port: string, path: string, opts: HttpProbeOptions): k8s.Probe {
  return {
    httpGet: { path, port: k8s.IntOrString.fromString(port) },
    periodSeconds: opts.periodSeconds,
    timeoutSeconds: opts.timeoutSeconds ?? 3,
    failureThreshold: opts.failureThreshold ?? 3,
  };
}
