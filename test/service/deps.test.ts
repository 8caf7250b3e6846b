import { buildTestApp } from '../helpers/app';
import { startDeps } from '../../service/deps';
import { holdLoop } from '../helpers/cpu-time';

describe('closeDeps', () => {
  it("stops the metrics' event-loop monitor with the rest (Node would keep it, and all it reaches, for the process's life)", async () => {
    const t = await buildTestApp({ service: { environment: 'testing' } });
    const loop = t.deps.metrics.eventLoopDelay;
    await holdLoop(60);
    // Running: a held loop is sampled.
    expect(loop.take().busyMax).toBeGreaterThan(0.04);
    await t.close();
    loop.take();
    await holdLoop(60);
    expect(loop.take()).toEqual({ p99: 0, max: 0, busyMax: 0 });
  });
});

describe('startDeps', () => {
  it('runs settle once the content is loaded and indexed, and only then marks the service ready', async () => {
    const t = await buildTestApp({ service: { demoContent: true } }, { start: false });
    try {
      const seen: Array<{ state: string; items: number | undefined }> = [];
      await startDeps(t.deps, {
        settle: () => seen.push({ state: t.deps.lifecycle.state, items: t.deps.features.contentHealth?.().items }),
      });
      expect(seen).toHaveLength(1);
      expect(seen[0].state).toBe('starting');
      expect(seen[0].items).toBeGreaterThan(0);
      expect(t.deps.lifecycle.state).toBe('ready');
    } finally {
      await t.close();
    }
  });
});
