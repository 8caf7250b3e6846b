import { ApiObject, JsonPatch } from 'cdk8s';
import type {
  Capability,
  Container,
  ContainerSecurityContextProps,
  PodSecurityContextProps,
  Workload,
} from 'cdk8s-plus-27';
import { patchContainer } from './container-patch';

/** A non-root identity for a pod. */
export interface RunAs {
  readonly user: number;
  readonly group: number;
}

/**
 * Pod security context that passes the "restricted" Pod Security Standard with
 * `runtimeDefaultSeccomp`: non-root, fixed ids; `fsGroup` makes mounted volumes writable for the user.
 */
export function restrictedPodSecurity(runAs: RunAs): PodSecurityContextProps {
  return { ensureNonRoot: true, user: runAs.user, group: runAs.group, fsGroup: runAs.group };
}

/** `ALL` of a capabilities `drop` list, which cdk8s-plus's `Capability` enum does not name. */
export const DROP_ALL = 'ALL' as unknown as Capability;

/** Container security context: read-only root filesystem, no privilege escalation, no capabilities. */
export const RESTRICTED_CONTAINER: ContainerSecurityContextProps = {
  ensureNonRoot: true,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  privileged: false,
  capabilities: { drop: [DROP_ALL] },
};

/**
 * The `RuntimeDefault` seccomp profile on the pod and on `containers` (found by name): the
 * "restricted" Pod Security Standard asks for it and cdk8s-plus's security contexts cannot say it.
 */
export function runtimeDefaultSeccomp(workload: Workload, containers: readonly Container[]): void {
  const profile = { type: 'RuntimeDefault' };
  ApiObject.of(workload).addJsonPatch(JsonPatch.add('/spec/template/spec/securityContext/seccompProfile', profile));
  for (const container of containers)
    patchContainer(workload, container, (c) => [JsonPatch.add(`${c}/securityContext/seccompProfile`, profile)]);
}
