import { k8s } from 'cdk8s-plus-27';

/** CPU and memory as Kubernetes quantities, e.g. `{ cpu: '100m', memory: '128Mi' }`. */
export interface CpuMemory {
  readonly cpu: string;
  readonly memory: string;
}

/** Requests (what the scheduler reserves, what the HPA measures against) and limits. */
export interface ComputeResources {
  readonly requests: CpuMemory;
  readonly limits: CpuMemory;
}

function quantities(q: CpuMemory): Record<string, k8s.Quantity> {
  return { cpu: k8s.Quantity.fromString(q.cpu), memory: k8s.Quantity.fromString(q.memory) };
}

/** The container field for `resources`. */
export function resourceRequirements(r: ComputeResources): k8s.ResourceRequirements {
  return { requests: quantities(r.requests), limits: quantities(r.limits) };
}
