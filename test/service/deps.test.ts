import { buildTestApp } from '../helpers/app';
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
