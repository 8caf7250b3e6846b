import { ApiObject, JsonPatch } from 'cdk8s';
import type { Container, Workload } from 'cdk8s-plus-27';

/**
 * Adds JSON patches to one container of a workload's pod template, addressed by its name: the
 * index is looked up among the workload's containers when the patches are added (cdk8s-plus only
 * appends, so a container a consumer adds later, or added earlier, leaves it right), and a `test`
 * op on the container's name goes first, so synth fails rather than patch another container if
 * the order ever changes. `patches` receives the container's JSON pointer.
 */
export function patchContainer(
  workload: Workload,
  container: Container,
  patches: (pointer: string) => readonly JsonPatch[],
): void {
  const index = workload.containers.findIndex((c) => c.name === container.name);
  if (index < 0) throw new Error(`${workload.node.path} has no container named ${container.name}`);
  const pointer = `/spec/template/spec/containers/${index}`;
  ApiObject.of(workload).addJsonPatch(JsonPatch.test(`${pointer}/name`, container.name), ...patches(pointer));
}
