import { ApiObject, JsonPatch } from 'cdk8s';
import { ImagePullPolicy, type Workload } from 'cdk8s-plus-27';
import type { Settings } from '../configs';
import { PLACEHOLDER_BACKEND_IMAGE } from '../configs';

/**
 * `imagePullPolicy` for an image reference: a digest never changes, so `IfNotPresent`; no tag or
 * `latest` moves, so `Always`; any other tag is taken as a release that is never re-pushed.
 */
export function imagePullPolicy(image: string): ImagePullPolicy {
  if (image.includes('@sha256:')) return ImagePullPolicy.IF_NOT_PRESENT;
  const last = image.split('/').pop() ?? image;
  return !last.includes(':') || last.endsWith(':latest') ? ImagePullPolicy.ALWAYS : ImagePullPolicy.IF_NOT_PRESENT;
}

/**
 * `imagePullSecrets` of a workload's pods, none when there are none. cdk8s-plus's
 * `dockerRegistryAuth` takes one Secret; the stack accepts several (`IMAGE_PULL_SECRETS`).
 */
export function addImagePullSecrets(workload: Workload, names: readonly string[] | undefined): void {
  if (!names || names.length === 0) return;
  ApiObject.of(workload).addJsonPatch(
    JsonPatch.add(
      '/spec/template/spec/imagePullSecrets',
      names.map((name) => ({ name })),
    ),
  );
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
