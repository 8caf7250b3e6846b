import { ApiObject, JsonPatch, Size } from 'cdk8s';
import { Cpu, LabelSelector, Pod, type Service, type Capability, type ContainerResources, type Workload } from 'cdk8s-plus-27';
import type { ComputeResources, CpuMemory } from './resources';

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

/**
 * The `RuntimeDefault` seccomp profile on the pod and on its first `containers` containers: the
 * "restricted" Pod Security Standard asks for it and cdk8s-plus's security contexts cannot say it.
 */
export function runtimeDefaultSeccomp(workload: Workload, containers: number): void {
  const api = ApiObject.of(workload);
  const profile = { type: 'RuntimeDefault' };
  api.addJsonPatch(JsonPatch.add('/spec/template/spec/securityContext/seccompProfile', profile));
  for (let i = 0; i < containers; i++) {
    api.addJsonPatch(JsonPatch.add(`/spec/template/spec/containers/${i}/securityContext/seccompProfile`, profile));
  }
}

/** `ComputeResources` (Kubernetes quantity strings) as cdk8s-plus container resources. */
export function containerResources(r: ComputeResources): ContainerResources {
  return {
    cpu: { request: cpu(r.requests), limit: cpu(r.limits) },
    memory: { request: memory(r.requests), limit: memory(r.limits) },
  };
}

function cpu(q: CpuMemory): Cpu {
  const m = /^(\d+)m$/.exec(q.cpu);
  if (m) return Cpu.millis(Number(m[1]));
  if (/^\d+(\.\d+)?$/.test(q.cpu)) return Cpu.units(Number(q.cpu));
  throw new Error(`cpu quantity ${JSON.stringify(q.cpu)} is not supported: use millicores ("250m") or cores ("1")`);
}

const MEMORY_UNITS: Readonly<Record<string, (n: number) => Size>> = {
  Ki: Size.kibibytes,
  Mi: Size.mebibytes,
  Gi: Size.gibibytes,
  Ti: Size.tebibytes,
};

function memory(q: CpuMemory): Size {
  const m = /^(\d+)(Ki|Mi|Gi|Ti)$/.exec(q.memory);
  if (!m) throw new Error(`memory quantity ${JSON.stringify(q.memory)} is not supported: use Ki, Mi, Gi or Ti ("256Mi")`);
  return MEMORY_UNITS[m[2]](Number(m[1]));
}


/**
 * `imagePullSecrets` of a workload's pods. cdk8s-plus's `dockerRegistryAuth` takes one Secret;
 * the stack accepts several (`IMAGE_PULL_SECRETS`), so they are written as the API has them.
 */
export function addImagePullSecrets(workload: Workload, names: readonly string[] | undefined): void {
  if (!names || names.length === 0) return;
  ApiObject.of(workload).addJsonPatch(JsonPatch.add('/spec/template/spec/imagePullSecrets', names.map((name) => ({ name }))));
}

/** `ALL` of a capabilities `drop` list, which cdk8s-plus's `Capability` enum does not name. */
export const DROP_ALL = 'ALL' as unknown as Capability;

/**
 * A Service that selects `labels` only. cdk8s-plus adds the workload's `cdk8s.io/metadata.addr`
 * to the selector of the Service it is given; pods made before the move to cdk8s-plus lack that
 * label, and a rolling update would take them out of the Service before their replacements are
 * ready, so the selector stays what it was.
 */
export function serviceSelectsExactly(service: Service, labels: Readonly<Record<string, string>>): void {
  for (const [key, value] of Object.entries(labels)) service.selectLabel(key, value);
  ApiObject.of(service).addJsonPatch(JsonPatch.remove(`/spec/selector/${Pod.ADDRESS_LABEL.replace(/~/g, '~0').replace(/\//g, '~1')}`));
}
