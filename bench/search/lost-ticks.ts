/**
 * Lost ticks: stretches in which a busy vCPU of this machine did not run at all. Every 10 ms it
 * reads `/proc/stat`; per CPU, the time its scheduler tick accounted (user … steal, clock ticks)
 * against wall time. A CPU takes a tick every 1/HZ s while it runs, idle included (a tickless idle
 * is accounted on wake), so a deficit means the CPU was not there: its host did not run the vCPU.
 * Where the host reports that as steal time the kernel also keeps it out of the threads' CPU time;
 * where it does not (steal stays 0), the thread the vCPU was running is charged the whole gap, and a
 * turn of the loop's thread grows by it. Each deficit over `thresholdMs` in a 300 ms window is
 * written to stdout with its epoch ms, to set beside `filters.ts --turns --turn-detail`.
 *
 *   node -r ts-node/register/transpile-only bench/search/lost-ticks.ts [seconds: 600] [thresholdMs: 40]
 *
 * Clock ticks are 10 ms and the kernel's tick 4 ms here, so a 300 ms window reads up to ~25 ms
 * short with nothing lost; the threshold sits above that.
 */
import { openSync, readSync } from 'node:fs';

/** `/proc/stat`'s clock ticks a second (USER_HZ). */
const USER_HZ = 100;
/** Deficits are measured over windows this long, ms. */
const WINDOW_MS = 300;

/** Per CPU, the clock ticks accounted so far (all states) and of them idle or waiting for I/O. */
function cpuTicks(fd: number, buf: Buffer): { total: number; idle: number }[] {
  const text = buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0));
  const out: { total: number; idle: number }[] = [];
  for (const line of text.split('\n')) {
    if (!/^cpu\d/.test(line)) continue;
    const f = line.split(/\s+/).slice(1, 9).map(Number);
    out.push({ total: f.reduce((a, b) => a + b, 0), idle: f[3] + f[4] });
  }
  return out;
}

/** One lost stretch of one CPU: the window's epoch bounds, the deficit, idle ticks in it. */
interface Lost {
  readonly cpu: number;
  readonly from: number;
  to: number;
  lostMs: number;
  idleTicks: number;
}

function main(seconds: number, thresholdMs: number): void {
  const fd = openSync('/proc/stat', 'r');
  const buf = Buffer.alloc(16384);
  const start = Date.now();
  const ring: { at: number; ticks: { total: number; idle: number }[] }[] = [];
  const open = new Map<number, Lost>();
  const worst: number[] = [];
  let events = 0;
  const report = (e: Lost): void => {
    events++;
    process.stdout.write(
      `lost ${e.lostMs.toFixed(0)} ms cpu${e.cpu} between ${new Date(e.from).toISOString()} and ${new Date(e.to).toISOString()} (epoch ${e.from}-${e.to}) idle-ticks ${e.idleTicks}\n`,
    );
  };
  const sample = (): void => {
    const at = Date.now();
    const ticks = cpuTicks(fd, buf);
    ring.push({ at, ticks });
    while (at - ring[0].at > WINDOW_MS) ring.shift();
    const first = ring[0];
    ticks.forEach((t, cpu) => {
      const lost = at - first.at - ((t.total - first.ticks[cpu].total) * 1000) / USER_HZ;
      worst[cpu] = Math.max(worst[cpu] ?? 0, lost);
      const e = open.get(cpu);
      if (lost > thresholdMs) {
        const idleTicks = t.idle - first.ticks[cpu].idle;
        if (!e) open.set(cpu, { cpu, from: first.at, to: at, lostMs: lost, idleTicks });
        else {
          e.to = at;
          if (lost > e.lostMs) Object.assign(e, { lostMs: lost, idleTicks });
        }
      } else if (e && at - e.to > WINDOW_MS) {
        report(e);
        open.delete(cpu);
      }
    });
    if (at - start < seconds * 1000) setTimeout(sample, 10);
    else {
      open.forEach(report);
      process.stdout.write(
        `done: ${events} stretches over ${thresholdMs} ms in ${((at - start) / 1000).toFixed(0)} s; the largest deficit per CPU ${worst.map((w) => w.toFixed(0)).join(', ')} ms\n`,
      );
    }
  };
  sample();
}

main(Number(process.argv[2] ?? 600), Number(process.argv[3] ?? 40));
