import { App, Chart } from 'cdk8s';
import { loadStackSettings, SearchBackendStack } from 'svc-ai-search-backend';

/** Two search backends in the platform team's own Chart and namespace, synthesized into `outdir`. */
export function synthPlatform(outdir: string): App {
  const app = new App({ outdir });
  const chart = new Chart(app, 'search-platform', { namespace: 'search-platform' });
  const settings = loadStackSettings({ BACKEND_IMAGE: 'registry.example.com/svc-ai-search-backend:0.1.0' });
  const blue = new SearchBackendStack(chart, 'blue', { settings, namePrefix: 'blue-' });
  new SearchBackendStack(chart, 'green', { settings, namePrefix: 'green-' });
  // Compose with the objects instead of patching YAML.
  blue.backend.deployment.metadata.addAnnotation('platform.example.com/owner', 'search-team');
  app.synth();
  return app;
}

synthPlatform(process.argv[2] ?? 'dist');
