import { crdSchemaProblems, isOperatorResource } from '../../../tools/validate';
import { synthStack, type Json } from '../../charts/fixtures/stack';

describe('crdSchemaProblems (@kubernetes-models/prometheus-operator, in a child node)', () => {
  const operator = synthStack({ MONITORING_MODE: 'operator' }).manifests.filter(isOperatorResource);

  it('passes the ServiceMonitor, PrometheusRule and AlertmanagerConfig the stack synthesizes', () => {
    expect(operator.map((m) => m.kind)).toEqual(['ServiceMonitor', 'PrometheusRule', 'AlertmanagerConfig']);
    expect(crdSchemaProblems(operator)).toEqual([]);
  });

  it('names each object that breaks its schema, and a kind it has no schema for', () => {
    const broken = JSON.parse(JSON.stringify(operator)) as Json[];
    broken[1].spec.groups[0].rules[0].for = 5;
    // Child routes are schemaless in the CRD (preserve-unknown-fields); receivers are not.
    broken[2].spec.receivers[0].emailConfigs[0].sendResolved = 'yes';
    const unknown = { apiVersion: 'monitoring.coreos.com/v1', kind: 'PodMonitor', metadata: { name: 'x' } };
    const problems = crdSchemaProblems([...broken, unknown]);
    expect(problems).toEqual([
      expect.stringMatching(/^PrometheusRule\/svc-ai-search-backend: .*for/),
      expect.stringMatching(/^AlertmanagerConfig\/alertmanager: .*sendResolved/),
      'PodMonitor/x: no schema for monitoring.coreos.com/v1 PodMonitor',
    ]);
  });

  it('runs nothing for no objects', () => {
    expect(crdSchemaProblems([])).toEqual([]);
  });
});
