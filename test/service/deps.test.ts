import { buildTestApp } from '../helpers/app';

/** Holds the event loop for `ms` of this process's CPU time, then lets timers run. */
async function holdLoop(ms: number): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const until = cpuMs() + ms;
  while (cpuMs() < until);
  await new Promise((resolve) => setTimeout(resolve, 50));
}

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
