import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Starts a bench server process (`cmd args` in `cwd`, NODE_ENV=production) and resolves with it
 * and the port it prints as `LISTENING <port>`; rejects with its stderr if it exits first.
 */
export async function spawnListening(cmd: string, args: readonly string[], cwd: string, label: string): Promise<{ child: ChildProcess; port: number }> {
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
