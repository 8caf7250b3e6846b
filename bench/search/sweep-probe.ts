/**
 * What a full collection's `finish.sweep_array_buffers` costs the loop's thread: N buffers of one
 * kind and size, their pages touched, promoted to the old generation, dropped (or kept), then one
 * `gc()`, in a child process run with `--trace-gc-nvp --no-concurrent-array-buffer-sweeping`.
 *
 * Why that flag: V8 sweeps array buffers on a helper thread except in a memory-reducing
 * mark-compact (`ArrayBufferSweeper::RequestSweep`: `!heap_->ShouldReduceMemory() &&
 * v8_flags.concurrent_array_buffer_sweeping`), where the sweep (walking every buffer's extension
 * and freeing the dead ones' backing stores) runs in the pause on the loop's thread. The flag makes
 * every full collection sweep that way, so `gc()` shows what the memory reducer's collection pays.
 *
 * Kinds: `ab` a plain `ArrayBuffer` (a `Uint8Array(n)`), `sab` a `SharedArrayBuffer` (the
 * `untracked-arrays` `i32`…), `gsab` a growable one of exact length (`mapped`), `rab` a resizable
 * `ArrayBuffer`; `rab-shrunk` is `rab` resized to 0 before it is dropped (the shrink's CPU
 * reported apart). Reports the pause, its `finish.sweep_array_buffers`, the loop thread's CPU
 * across the `gc()` call (service/metrics/event-loop-delay.ts `loopThreadCpu`) and that CPU per
 * 4 KiB page freed.
 *
 * Usage: node -r ts-node/register/transpile-only bench/search/sweep-probe.ts [runs]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loopThreadCpu } from '../../service/metrics/event-loop-delay';
import { collectGarbage } from '../collect-garbage';

type Kind = 'ab' | 'sab' | 'gsab' | 'rab' | 'rab-shrunk';

const PAGE = 4096;

/** `SharedArrayBuffer`/`ArrayBuffer` with ES2024's `maxByteLength` option (Node 20 has both). */
const Growable = SharedArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => SharedArrayBuffer;
const Resizable = ArrayBuffer as unknown as new (
  n: number,
  o: { maxByteLength: number },
) => ArrayBuffer & {
  resize(n: number): void;
};

function make(kind: Kind, bytes: number): Uint8Array {
  let a: Uint8Array;
  if (kind === 'ab') a = new Uint8Array(bytes);
  else if (kind === 'sab') a = new Uint8Array(new SharedArrayBuffer(bytes));
  else if (kind === 'gsab') a = new Uint8Array(new Growable(bytes, { maxByteLength: bytes }), 0, bytes);
  else a = new Uint8Array(new Resizable(bytes, { maxByteLength: bytes }), 0, bytes);
  for (let i = 0; i < bytes; i += PAGE) a[i] = 1;
  return a;
}

/** The child: one case, its figures as a JSON line after the GC trace. */
function child(kind: Kind, n: number, bytes: number, dead: boolean): void {
  const cpu = loopThreadCpu();
  let keep: Uint8Array[] | null = [];
  for (let i = 0; i < n; i++) keep.push(make(kind, bytes));
  collectGarbage(2);
  let shrinkMs = 0;
  if (kind === 'rab-shrunk') {
    const c = cpu();
    for (const a of keep) (a.buffer as unknown as { resize(n: number): void }).resize(0);
    shrinkMs = (cpu() - c) * 1e3;
  }
  if (dead) keep = null;
  console.log('--- gc');
  const c0 = cpu();
  collectGarbage();
  const gcMs = (cpu() - c0) * 1e3;
  console.log(JSON.stringify({ kind, n, bytes, dead, gcMs, shrinkMs, kept: keep?.length ?? 0 }));
}

interface Row {
  kind: Kind;
  n: number;
  bytes: number;
  dead: boolean;
  gcMs: number;
  shrinkMs: number;
  pause: number;
  sweep: number;
}

function run(kind: Kind, n: number, bytes: number, dead: boolean): Row {
  const r = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      '--trace-gc-nvp',
      '--no-concurrent-array-buffer-sweeping',
      '-r',
      'ts-node/register/transpile-only',
      __filename,
      'child',
      kind,
      String(n),
      String(bytes),
      dead ? 'dead' : 'live',
    ],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  const lines = r.stdout.split('\n');
  const at = lines.indexOf('--- gc');
  const nvp = lines.slice(at + 1).find((l) => l.includes('gc=mc'));
  const json = lines.slice(at + 1).find((l) => l.startsWith('{'));
  if (!nvp || !json) throw new Error(`no trace in:\n${r.stdout.slice(-2000)}`);
  const field = (k: string): number => Number(new RegExp(`(?:^| )${k.replace('.', '\\.')}=([\\d.]+)`).exec(nvp)?.[1]);
  return {
    ...(JSON.parse(json) as Omit<Row, 'pause' | 'sweep'>),
    pause: field('pause'),
    sweep: field('finish.sweep_array_buffers'),
  };
}

function main(): void {
  const runs = Number(process.argv[2] ?? 3);
  const MiB = 1 << 20;
  // 800 MiB in large buffers, the same in 1 MiB ones, and 100,000 small ones (no pages to speak of).
  const cases: Array<[Kind, number, number]> = [
    ['ab', 100, 8 * MiB],
    ['sab', 100, 8 * MiB],
    ['gsab', 100, 8 * MiB],
    ['rab', 100, 8 * MiB],
    ['rab-shrunk', 100, 8 * MiB],
    ['gsab', 800, MiB],
    ['sab', 800, MiB],
    ['gsab', 25, 8 * MiB],
    ['sab', 100_000, 800],
  ];
  console.log(`load ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  console.log(
    '| kind | buffers × size | dead/live | pages | sweep_array_buffers ms (wall) | pause ms | gc() loop-thread CPU ms | CPU µs / page | shrink CPU ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  for (const [kind, n, bytes] of cases) {
    for (const dead of [true, false]) {
      const rows = Array.from({ length: runs }, () => run(kind, n, bytes, dead));
      const pages = (n * Math.ceil(bytes / PAGE)) | 0;
      const cpu = med(rows.map((r) => r.gcMs));
      const size = bytes >= MiB ? `${bytes / MiB} MiB` : `${bytes} B`;
      console.log(
        `| ${kind} | ${n} × ${size} | ${dead ? 'dead' : 'live'} | ${pages} | ${med(rows.map((r) => r.sweep)).toFixed(1)} | ${med(rows.map((r) => r.pause)).toFixed(1)} | ${cpu.toFixed(1)} | ${dead ? ((cpu * 1e3) / pages).toFixed(3) : '-'} | ${kind === 'rab-shrunk' ? med(rows.map((r) => r.shrinkMs)).toFixed(1) : '-'} |`,
      );
    }
  }
  console.log(`load ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
}

if (process.argv[2] === 'child') {
  const [, , , kind, n, bytes, state] = process.argv;
  child(kind as Kind, Number(n), Number(bytes), state === 'dead');
} else main();
