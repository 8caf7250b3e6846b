import { ApiObject, App, Chart, Duration, JsonPatch } from 'cdk8s';
import { Deployment, Probe, type ContainerProps } from 'cdk8s-plus-27';
import { patchContainer } from '../../charts/container-patch';
import { httpProbe, probesOnNamedPort } from '../../charts/probes';
import { runtimeDefaultSeccomp } from '../../charts/security';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- manifests are read freely

const sidecar = (name: string): ContainerProps => ({
  name,
  image: 'busybox:1.36',
  liveness: Probe.fromTcpSocket({ port: 9000 }),
});

/** A Deployment whose `main` container gets the stack's patches, with consumer sidecars added before and after it. */
function synth(before: boolean, after: boolean, extra?: (d: Deployment) => void): Json {
  const app = new App({ outdir: '/nonexistent' });
  const chart = new Chart(app, 'c');
  const d = new Deployment(chart, 'd', { metadata: { name: 'd' } });
  if (before) d.addContainer(sidecar('before'));
  extra?.(d);
  const main = d.addContainer({
    name: 'main',
    image: 'main:1',
    ports: [{ name: 'http', number: 8080 }],
    readiness: httpProbe('/ready', { period: Duration.seconds(5) }),
  });
  probesOnNamedPort(d, main, 'http', [['readinessProbe', 'httpGet']]);
  runtimeDefaultSeccomp(d, [main]);
  patchContainer(d, main, (c) => [JsonPatch.add(`${c}/workingDir`, '/data')]);
  if (after) d.addContainer(sidecar('after'));
  return ApiObject.of(d).toJson();
}

describe('JSON patches of a container address it by name', () => {
  const containers = (before: boolean, after: boolean) =>
    Object.fromEntries((synth(before, after).spec.template.spec.containers as Json[]).map((c) => [c.name, c]));

  it.each([
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ])(
    'patch the stack’s container, and only it, with a consumer’s container added before: %s, after: %s',
    (before, after) => {
      const all = containers(before, after);
      expect(all.main.readinessProbe.httpGet.port).toBe('http');
      expect(all.main.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
      expect(all.main.workingDir).toBe('/data');
      for (const name of ['before', 'after'].filter((n) => n in all)) {
        expect(all[name].livenessProbe.tcpSocket.port).toBe(9000);
        expect(all[name].securityContext.seccompProfile).toBeUndefined();
        expect(all[name].workingDir).toBeUndefined();
      }
    },
  );

  it('fail synth rather than patch another container when the order changes under them', () => {
    // A consumer's own patch that drops the first container moves `main` from index 1 to 0.
    const moved = (d: Deployment) => ApiObject.of(d).addJsonPatch(JsonPatch.remove('/spec/template/spec/containers/0'));
    expect(() => synth(true, false, moved)).toThrow(/Failed serializing construct at path 'c\/d\/Resource'/);
  });

  it('refuse a container of another workload', () => {
    const app = new App({ outdir: '/nonexistent' });
    const chart = new Chart(app, 'c');
    const a = new Deployment(chart, 'a');
    const b = new Deployment(chart, 'b');
    const other = b.addContainer({ name: 'other', image: 'x:1' });
    expect(() => patchContainer(a, other, () => [])).toThrow('c/a has no container named other');
  });
});
