import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/**
 * Starts a bench server process (`cmd args` in `cwd`, NODE_ENV=production) and resolves with it
 * and the port it prints as `LISTENING <port>`; rejects with its stderr if it exits first.
 */
export async function spawnListening(
  cmd: string,
  args: readonly string[],
  cwd: string,
  label: string,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(cmd, args, {
    cwd,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (b: Buffer) => (err += b.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`${label} exited with ${code}: ${err}`)));
  });
  return { child, port };
}

const compiled = new Map<string, string>();

/**
 * The node arguments that run `bench/ratelimit/<file>` of the tree at `root`: its JavaScript,
 * compiled once per tree and run (`tsc` into `<root>/build/bench-js`), as the service runs in
 * production, from `node dist/...`, not under ts-node, which keeps the TypeScript compiler in
 * every contestant's heap and costs each about a tenth more CPU per request. BENCH_TS=1 runs the
 * sources under ts-node instead (no compile step; slower contestants).
 */
export function benchScript(root: string, file: string): string[] {
  if (process.env.BENCH_TS === '1')
    return ['-r', 'ts-node/register/transpile-only', join(root, 'bench', 'ratelimit', file)];
  let out = compiled.get(root);
  if (out === undefined) {
    out = join(root, 'build', 'bench-js');
    const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
    const r = spawnSync(
      process.execPath,
      [tsc, '-p', join(root, 'tsconfig.json'), '--outDir', out, '--sourceMap', 'false', '--incremental', 'false'],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    if (r.status !== 0) throw new Error(`compiling ${root} for the benchmark failed:\n${r.stdout}${r.stderr}`);
    compiled.set(root, out);
  }
  return [join(out, 'bench', 'ratelimit', file.replace(/\.ts$/, '.js'))];
}
