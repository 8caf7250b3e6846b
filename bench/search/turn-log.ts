import { loopThreadCpu } from '../../service/metrics/event-loop-delay';

/**
 * Every long turn of the event loop over a whole run, with what the bench was doing when it began
 * and when it ended: a 1 ms timer reads the loop thread's CPU (`loopThreadCpu`) at each tick, and
 * a turn whose CPU passes `thresholdMs` is written to stderr with the labels the bench set
 * (`doing`) at the tick before it and at its end, and the time since the process started (to
 * match `--trace-gc`'s lines). Unlike the per-row monitors, it runs between the measured parts
 * too, so a long turn falls in some row or between two named ones, never in none.
 */
export function turnLog(thresholdMs: number): { doing(label: string): void; stop(): void } {
  const cpu = loopThreadCpu();
  let label = 'start';
  let lastLabel = label;
  let lastCpu = cpu();
  let lastWall = performance.now();
  const tick = setInterval(() => {
    const c = cpu();
    const w = performance.now();
    const turn = Math.min((c - lastCpu) * 1000, w - lastWall);
    if (turn >= thresholdMs)
      process.stderr.write(
        `turn ${turn.toFixed(1)} ms CPU (${(w - lastWall).toFixed(1)} wall) ending at ${w.toFixed(0)} ms: from "${lastLabel}" to "${label}"\n`,
      );
    lastCpu = c;
    lastWall = w;
    lastLabel = label;
  }, 1);
  tick.unref();
  return {
    doing(l: string) {
      label = l;
    },
    stop() {
      clearInterval(tick);
    },
  };
}
