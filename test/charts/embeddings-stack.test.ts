import {
  ALERTS,
  alertingRules,
  alertRules,
  backendSecretEnvironment,
  dashboardPanels,
  loadStackSettings,
} from '../../charts';
import { METRICS } from '../../contract';
import { find, SECRET_ENV, SECRET_VALUES, synthStack } from './fixtures/stack';

/**
 * The embedder in the stack (issue 41): while `EMBEDDINGS_PROVIDER=none` (the default) the
 * manifests are byte for byte those of a stack that never heard of embeddings, whatever the other
 * `EMBEDDINGS_*` variables say; with a provider, its settings reach the ConfigMap and its key
 * comes from the Secret by reference, never as a value.
 */
describe('the embedder in the stack', () => {
  const plain = synthStack();

  it('changes no byte of any manifest while EMBEDDINGS_PROVIDER=none', () => {
    const off = synthStack({
      EMBEDDINGS_PROVIDER: 'none',
      EMBEDDINGS_MODEL: 'nomic-embed-text',
      EMBEDDINGS_DIMENSIONS: '1536',
      EMBEDDINGS_BASE_URL: 'http://ollama:11434/v1',
      EMBEDDINGS_API_KEY: 'sk-embeddings-never-written',
    });
    expect([...off.files.keys()]).toEqual([...plain.files.keys()]);
    for (const [name, text] of plain.files) expect(`${name}: ${off.files.get(name) === text}`).toBe(`${name}: true`);
  });

  it('with no provider, a changed vector length reaches the ConfigMap: client-provided vectors are checked against it', () => {
    const off = synthStack({ EMBEDDINGS_PROVIDER: 'none', EMBEDDINGS_DIMENSIONS: '384', SEARCH_HYBRID_FUSION: 'rrf' });
    const data = find(off.manifests, 'ConfigMap', 'backend-config').data;
    expect(data).toMatchObject({ EMBEDDINGS_DIMENSIONS: '384', SEARCH_HYBRID_FUSION: 'rrf' });
    expect(data.EMBEDDINGS_PROVIDER).toBeUndefined();
    expect(data.EMBEDDINGS_MODEL).toBeUndefined();
  });

  it('with a provider: its settings in the ConfigMap, its key from the Secret (optional), no secret value anywhere', () => {
    const on = synthStack({ ...SECRET_ENV, EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_DIMENSIONS: '384' });
    const data = find(on.manifests, 'ConfigMap', 'backend-config').data;
    expect(data).toMatchObject({ EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_DIMENSIONS: '384' });
    expect(data.EMBEDDINGS_API_KEY).toBeUndefined();
    const env = find(on.manifests, 'Deployment', 'backend').spec.template.spec.containers[0].env;
    expect(env.find((e: { name: string }) => e.name === 'EMBEDDINGS_API_KEY')).toEqual({
      name: 'EMBEDDINGS_API_KEY',
      valueFrom: { secretKeyRef: { key: 'embeddings-api-key', name: 'svc-ai-search-secrets', optional: true } },
    });
    const text = [...on.files.values()].join('\n');
    for (const secret of SECRET_VALUES) expect(`${secret}: ${text.includes(secret)}`).toBe(`${secret}: false`);
  });

  it('references the key only with a provider, and always as optional', () => {
    expect(backendSecretEnvironment().map((r) => r.variable)).not.toContain('EMBEDDINGS_API_KEY');
    expect(backendSecretEnvironment({ embeddings: true }).find((r) => r.variable === 'EMBEDDINGS_API_KEY')).toEqual({
      variable: 'EMBEDDINGS_API_KEY',
      key: 'embeddings-api-key',
      optional: true,
    });
  });

  it('adds the Embeddings row to the dashboard and EmbeddingBacklogNotDraining to the rules only with a provider', () => {
    const off = loadStackSettings({});
    const on = loadStackSettings({ EMBEDDINGS_PROVIDER: 'openai' });
    expect(dashboardPanels(off).map((r) => r.title)).not.toContain('Embeddings');
    const row = dashboardPanels(on).find((r) => r.title === 'Embeddings');
    expect(row?.panels.map((p) => p.title)).toEqual([
      'Embedding calls and errors',
      'Embedding call latency',
      'Embeddings pending (EmbeddingBacklogNotDraining)',
    ]);
    const exprs = row!.panels.flatMap((p) => p.queries.map((q) => q.expr)).join('\n');
    for (const name of [
      METRICS.embeddingCallsTotal,
      METRICS.embeddingErrorsTotal,
      METRICS.embeddingCallDuration,
      METRICS.embeddingsPending,
    ])
      expect(exprs).toContain(name);
    const names = (s: typeof on) => alertingRules(alertRules(s)).map((r) => r.alert);
    expect(names(off)).not.toContain(ALERTS.embeddingBacklogNotDraining);
    const rule = alertingRules(alertRules(on)).find((r) => r.alert === ALERTS.embeddingBacklogNotDraining);
    expect(rule).toMatchObject({ for: '15m', labels: { severity: 'warning' } });
    expect(rule?.expr).toBe(
      'max by (namespace, job, instance) (min_over_time(svc_ai_search_embeddings_pending{job="svc-ai-search-backend"}[30m])) > 0\n' +
        'and\n' +
        'max by (namespace, job, instance) (delta(svc_ai_search_embeddings_pending{job="svc-ai-search-backend"}[30m])) >= 0',
    );
  });
});
