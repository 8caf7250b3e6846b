/**
 * What it costs to read memory again after it was left alone for a while: 1 GiB in 128 chunks of
 * 8 MiB, each written once, then re-read (one byte a 4 KiB page) after an age drawn from
 * `AGES_S`; per re-read the wall time (the thread's CPU time moves in whole scheduler ticks here,
 * too coarse for a read of ~0.1–3 ms) and the thread's page faults and context switches. Only the
 * reads in which the thread was not switched out count, so their wall time is time on a CPU (or
 * time its host spent for it). At the end, per age: the reads counted and ns a page, p10 / p50 /
 * p90. On bare metal the cost does not depend on the age past the caches' reach (seconds).
 *
 *   node -r ts-node/register/transpile-only bench/search/cold-pages.ts [seconds: 600] [label]
 */
import { openSync, readSync } from 'node:fs';

const CHUNKS = 128;
const CHUNK_BYTES = 8 << 20;
const PAGE = 4096;
const PAGES = CHUNK_BYTES / PAGE;
/** Ages at which a chunk is read again, s. */
const AGES_S = [1, 10, 30, 60, 120, 240];

/** The thread's timeslices (schedstat) and faults (stat), read through kept handles. */
function threadCounts(): () => { slices: number; faults: number } {
  const dir = `/proc/self/task/${process.pid}`;
  const sched = openSync(`${dir}/schedstat`, 'r');
  const stat = openSync(`${dir}/stat`, 'r');
  const buf = Buffer.alloc(1024);
  return () => {
    const slices = Number(buf.toString('latin1', 0, readSync(sched, buf, 0, buf.length, 0)).split(' ')[2]);
    const text = buf.toString('latin1', 0, readSync(stat, buf, 0, buf.length, 0));
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { slices, faults: Number(f[7]) + Number(f[9]) };
  };
}

/** Reads one byte of every page of `b`. */
function touch(b: Buffer): number {
  let s = 0;
  for (let p = 0; p < b.length; p += PAGE) s += b[p];
  return s;
}

function main(seconds: number, label: string): void {
  const counts = threadCounts();
  const chunks = Array.from({ length: CHUNKS }, (_, i) => {
    const b = Buffer.allocUnsafeSlow(CHUNK_BYTES);
    for (let p = 0; p < CHUNK_BYTES; p += PAGE) b[p] = (i + p) & 255;
    return b;
  });
  const begun = Date.now();
  const age = chunks.map((_, i) => AGES_S[i % AGES_S.length]);
  const last = chunks.map(() => begun);
  const byAge = new Map<number, number[]>();
  let faults = 0;
  let sink = 0;
  const step = (): void => {
    const now = Date.now();
    if (now - begun >= seconds * 1000) return finish();
    let due = -1;
    for (let i = 0; i < CHUNKS; i++)
      if (now - last[i] >= age[i] * 1000 && (due < 0 || last[i] + age[i] * 1000 < last[due] + age[due] * 1000)) due = i;
    if (due >= 0) {
      const before = counts();
      const t = performance.now();
      sink += touch(chunks[due]);
      const ns = ((performance.now() - t) * 1e6) / PAGES;
      const after = counts();
      faults += after.faults - before.faults;
      if (after.slices === before.slices) byAge.set(age[due], [...(byAge.get(age[due]) ?? []), ns]);
      last[due] = Date.now();
      age[due] = AGES_S[Math.floor(Math.random() * AGES_S.length)];
    }
    setTimeout(step, 200);
  };
  const finish = (): void => {
    for (const a of AGES_S) {
      const v = (byAge.get(a) ?? []).sort((x, y) => x - y);
      if (v.length === 0) continue;
      const q = (p: number): string => v[Math.min(v.length - 1, Math.floor(v.length * p))].toFixed(0);
      process.stdout.write(
        `${label} age ${a} s: ${v.length} reads, ns a page p10 ${q(0.1)} p50 ${q(0.5)} p90 ${q(0.9)}\n`,
      );
    }
    process.stdout.write(`${label} page faults during the reads: ${faults} (${sink > 0 ? 'read' : 'none read'})\n`);
  };
  step();
}

main(Number(process.argv[2] ?? 600), process.argv[3] ?? '');
