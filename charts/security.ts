import type { k8s } from 'cdk8s-plus-27';

/** A non-root identity for a pod. */
export interface RunAs {
  readonly user: number;
  readonly group: number;
}

/**
 * Pod security context that passes the "restricted" Pod Security Standard: non-root, fixed ids,
 * the runtime's default seccomp profile; `fsGroup` makes mounted volumes writable for the user.
 */
export function restrictedPodSecurity(runAs: RunAs): k8s.PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: runAs.user,
    runAsGroup: runAs.group,
    fsGroup: runAs.group,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** Container security context: read-only root filesystem, no privilege escalation, no capabilities. */
export const RESTRICTED_CONTAINER: k8s.SecurityContext = {
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  privileged: false,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};
