import { closeSync, openSync, readSync } from 'node:fs';
import { loopThreadCpu } from '../../service/metrics/event-loop-delay';

/**
 * What the kernel counts for the loop's thread, read at every tick of the turn log: Linux's
 * `/proc/self/task/<pid>/schedstat` (time on a CPU, time waiting for one, timeslices) and
 * `…/stat` (faults, user and system time, the CPU it last ran on), each through one handle kept
 * open (a read is one syscall). Null where they cannot be read.
 */
interface ThreadCounters {
  /** Time on a CPU and waiting on a run queue, ns; timeslices run (context switches in, plus one). */
  readonly run: number;
  readonly wait: number;
  readonly slices: number;
  /** Minor and major page faults. */
  readonly minflt: number;
  readonly majflt: number;
  /** User and system time, clock ticks (`/proc`'s, scaled by the kernel to the time on a CPU). */
  readonly utime: number;
  readonly stime: number;
  /** The CPU it ran on last. */
  readonly cpu: number;
}

function threadCounters(): (() => ThreadCounters) | null {
  const dir = `/proc/self/task/${process.pid}`;
  let sched: number | undefined;
  let stat: number | undefined;
  try {
    sched = openSync(`${dir}/schedstat`, 'r');
    stat = openSync(`${dir}/stat`, 'r');
  } catch {
    if (sched !== undefined) closeSync(sched);
    return null;
  }
  const buf = Buffer.alloc(1024);
  const s = sched;
  const t = stat;
  return () => {
    const a = buf.toString('latin1', 0, readSync(s, buf, 0, buf.length, 0)).split(' ');
    const text = buf.toString('latin1', 0, readSync(t, buf, 0, buf.length, 0));
    // Fields after the command's closing parenthesis, from the third (state): see proc(5).
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return {
      run: Number(a[0]),
      wait: Number(a[1]),
      slices: Number(a[2]),
      minflt: Number(f[7]),
      majflt: Number(f[9]),
      utime: Number(f[11]),
      stime: Number(f[12]),
      cpu: Number(f[36]),
    };
  };
}

/** The counters' change over one turn, for its log line. */
function describe(from: ThreadCounters, to: ThreadCounters): string {
  return (
    `user ${to.utime - from.utime} sys ${to.stime - from.stime} ticks, ` +
    `faults ${to.minflt - from.minflt} minor ${to.majflt - from.majflt} major, ` +
    `${to.slices - from.slices} switches, waited ${((to.wait - from.wait) / 1e6).toFixed(1)} ms, ` +
    `cpu${from.cpu}→cpu${to.cpu}`
  );
}

/**
 * Every long turn of the event loop over a whole run, with what the bench was doing when it began
 * and when it ended: a 1 ms timer reads the loop thread's CPU (`loopThreadCpu`) at each tick, and
 * a turn whose CPU passes `thresholdMs` is written to stderr with the labels the bench set
 * (`doing`) at the tick before it and at its end, and the time since the process started (to
 * match `--trace-gc`'s lines). Unlike the per-row monitors, it runs between the measured parts
 * too, so a long turn falls in some row or between two named ones, never in none.
 *
 * With `detail` (Linux only) the line also says what the kernel counted for the thread over the
 * turn (`ThreadCounters`: user and system ticks, page faults, context switches, time waiting for a
 * core, the CPU it ran on) and the turn's start in epoch ms, to set beside a probe in another
 * process (a vCPU its host did not run shows there as lost ticks at the same time).
 */
export function turnLog(thresholdMs: number, detail = false): { doing(label: string): void; stop(): void } {
  const cpu = loopThreadCpu();
  const counters = detail ? threadCounters() : null;
  let label = 'start';
  let lastLabel = label;
  let lastCpu = cpu();
  let lastWall = performance.now();
  let lastCounters = counters?.();
  const tick = setInterval(() => {
    const c = cpu();
    const w = performance.now();
    const k = counters?.();
    const turn = Math.min((c - lastCpu) * 1000, w - lastWall);
    if (turn >= thresholdMs) {
      const more =
        k && lastCounters
          ? `; from epoch ${(performance.timeOrigin + lastWall).toFixed(0)}: ${describe(lastCounters, k)}`
          : '';
      process.stderr.write(
        `turn ${turn.toFixed(1)} ms CPU (${(w - lastWall).toFixed(1)} wall) ending at ${w.toFixed(0)} ms: from "${lastLabel}" to "${label}"${more}\n`,
      );
    }
    lastCpu = c;
    lastWall = w;
    lastLabel = label;
    lastCounters = k;
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
