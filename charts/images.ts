import type { Settings } from '../configs';
import { PLACEHOLDER_BACKEND_IMAGE } from '../configs';

/**
 * `imagePullPolicy` for an image reference: a digest never changes, so `IfNotPresent`; no tag or
 * `latest` moves, so `Always`; any other tag is taken as a release that is never re-pushed.
 */
export function imagePullPolicy(image: string): 'Always' | 'IfNotPresent' {
  if (image.includes('@sha256:')) return 'IfNotPresent';
  const last = image.split('/').pop() ?? image;
  return !last.includes(':') || last.endsWith(':latest') ? 'Always' : 'IfNotPresent';
}

/** `imagePullSecrets` of a pod spec, or nothing when there are none (keeps the manifests minimal). */
export function pullSecrets(names: readonly string[] | undefined): { imagePullSecrets?: Array<{ name: string }> } {
  return names && names.length ? { imagePullSecrets: names.map((name) => ({ name })) } : {};
}

/** What synth should say out loud about settings that will not work in a cluster. */
export function stackWarnings(settings: Settings): string[] {
  const warnings: string[] = [];
  if (settings.deploy.backendImage === PLACEHOLDER_BACKEND_IMAGE) {
    warnings.push(
      `BACKEND_IMAGE is still the placeholder ${PLACEHOLDER_BACKEND_IMAGE}, which no registry serves: the backend pods will fail with ImagePullBackOff. ` +
        'Build and push the image, then synth with BACKEND_IMAGE=<registry>/<name>:<tag> (docs/stack.md, "Build and push").',
    );
  }
  return warnings;
}
