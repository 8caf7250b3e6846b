import { ApiObject, JsonPatch, type ApiObjectMetadata } from 'cdk8s';
import { LabelSelector, Pod, Protocol, Service, k8s, type Workload } from 'cdk8s-plus-27';
import type { Construct } from 'constructs';

/**
 * Makes a cdk8s-plus workload (built with `select: false`) select its pods by `labels` exactly as
 * the stack always has: selectors are immutable in a cluster, so cdk8s-plus's own
 * `cdk8s.io/metadata.addr` must not join them. That label stays on the pod template (cdk8s-plus
 * puts it there), so `connections` and Services that select the workload still find its pods.
 */
export function selectExactly(workload: Workload, labels: Readonly<Record<string, string>>): void {
  workload.select(LabelSelector.of({ labels: { ...labels } }));
  for (const [key, value] of Object.entries(labels)) workload.podMetadata.addLabel(key, value);
}

/** A port of `exactService`: `port` forwards to the container port named `name`. */
export interface NamedServicePort {
  /** Name of the Service port and of the container port it forwards to. */
  readonly name: string;
  /** Port the Service listens on. */
  readonly port: number;
}

/** What `exactService` creates. */
export interface ExactServiceProps {
  /** Name and labels of the Service. */
  readonly metadata: ApiObjectMetadata;
  /** Pod labels the Service selects, and nothing else. */
  readonly selector: Readonly<Record<string, string>>;
  /** TCP ports, each to the container port of the same name. */
  readonly ports: readonly NamedServicePort[];
  /** `None` for a headless Service. @default a cluster IP */
  readonly clusterIP?: string;
}

/**
 * A cdk8s-plus Service that selects `selector` only, with named target ports. cdk8s-plus takes
 * only numeric target ports; a named one follows the container port when it changes (`PORT`).
 */
export function exactService(scope: Construct, id: string, props: ExactServiceProps): Service {
  const service = new Service(scope, id, {
    metadata: props.metadata,
    clusterIP: props.clusterIP,
    ports: props.ports.map((p) => ({ name: p.name, port: p.port, protocol: Protocol.TCP })),
  });
  for (const [key, value] of Object.entries(props.selector)) service.selectLabel(key, value);
  const api = ApiObject.of(service);
  // Patches pass through the L1 serializer, which drops a bare string where it expects IntOrString.
  props.ports.forEach((p, i) =>
    api.addJsonPatch(JsonPatch.add(`/spec/ports/${i}/targetPort`, k8s.IntOrString.fromString(p.name))),
  );
  return service;
}

/**
 * Takes the workload's `cdk8s.io/metadata.addr` out of a Service's selector (a StatefulSet adds it
 * to the Service it is given). Pods made before the move to cdk8s-plus lack that label, and a
 * rolling update would take them out of the Service before their replacements are ready.
 */
export function dropAddressSelector(service: Service): void {
  ApiObject.of(service).addJsonPatch(
    JsonPatch.remove(`/spec/selector/${Pod.ADDRESS_LABEL.replace(/~/g, '~0').replace(/\//g, '~1')}`),
  );
}
