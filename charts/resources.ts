import { Size } from 'cdk8s';
import { Cpu, type ContainerResources } from 'cdk8s-plus-27';

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
  if (!m)
    throw new Error(`memory quantity ${JSON.stringify(q.memory)} is not supported: use Ki, Mi, Gi or Ti ("256Mi")`);
  return MEMORY_UNITS[m[2]](Number(m[1]));
}
