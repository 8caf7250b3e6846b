import type { Manifest } from '../../../tools/read-manifests';
import { schemaProblems } from '../../../tools/validate';
import { synthStack, type Json } from '../../charts/fixtures/stack';

const { manifests } = synthStack();

function mutate(kind: string, name: string, change: (m: Json) => void): Manifest[] {
  const copy = JSON.parse(JSON.stringify(manifests)) as Json[];
  change(copy.find((m) => m.kind === kind && m.metadata.name === name));
  return copy;
}

describe('schemaProblems', () => {
  it('passes every synthesized object', () => {
    expect(schemaProblems(manifests)).toEqual([]);
  });

  it('reports wrong types, missing fields and unknown kinds', () => {
    const badPort = mutate('Service', 'backend', (m) => (m.spec.ports[0].port = '8080'));
    expect(schemaProblems(badPort)).toEqual(['Service/backend: data/spec/ports/0/port must be integer']);
    const noImage = mutate('Deployment', 'backend', (m) => delete m.spec.template.spec.containers);
    expect(schemaProblems(noImage).join()).toContain('must have required property containers');
    expect(schemaProblems([{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }])).toEqual([
      'Widget/w: no schema for example.com/v1 Widget',
    ]);
  });
});
