import { readdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { loopThreadCpu, monitorEventLoop } from '../../../service/metrics/event-loop-delay';

const spin = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('loopThreadCpu', () => {
  it("counts the loop thread's own work", () => {
    const cpu = loopThreadCpu();
    const before = cpu();
    spin(60);
    // At least part of 60 ms of spinning, however busy the machine (a starved thread spins less CPU).
    expect(cpu() - before).toBeGreaterThan(0.005);
  });

  const linux = process.platform === 'linux' ? it : it.skip;
  linux("leaves out another thread's work (Linux: the loop thread's schedstat)", async () => {
    const cpu = loopThreadCpu();
    const before = cpu();
    const processBefore = process.cpuUsage();
    // A thread that spins 300 ms while the loop thread only waits for it.
    const worker = new Worker('const until = performance.now() + 300; while (performance.now() < until);', {
      eval: true,
    });
    await new Promise((resolve) => worker.once('exit', resolve));
    const loop = cpu() - before;
    const all = process.cpuUsage(processBefore);
    // The process as a whole spent the worker's spin (at least a part of it on a busy machine, and
    // the worker's start); the loop thread spent the worker's start and little else.
    expect((all.user + all.system) / 1e6 - loop).toBeGreaterThan(0.05);
  });

  linux('reads one handle per process, however many monitors read it', () => {
    loopThreadCpu();
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    const monitors = Array.from({ length: 20 }, () => monitorEventLoop(10));
    const readers = Array.from({ length: 20 }, () => loopThreadCpu());
    expect(readers.every((r) => r() > 0)).toBe(true);
    for (const m of monitors) m.stop();
    // Each monitor and reader opened its own schedstat before (and never closed it).
    expect(open()).toBe(before);
  });
});

describe('monitorEventLoop', () => {
  it('reports a synchronous stall in busyMax, at most its clock time', async () => {
    const m = monitorEventLoop(10);
    m.take();
    await new Promise((r) => setTimeout(r, 30));
    spin(80);
    await new Promise((r) => setTimeout(r, 30));
    const stats = m.take();
    m.stop();
    expect(stats.busyMax).toBeGreaterThan(0);
    // A turn is counted from the previous tick of its 10 ms timer: at most the delay plus that tick.
    expect(stats.busyMax).toBeLessThanOrEqual(stats.max + 0.02);
  });
});
