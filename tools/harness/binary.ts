import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Finds a Debian-packaged binary. `make test` installs them (scripts/install-system-deps.sh);
 * when one is still missing the error says how to get it rather than letting a test hang.
 */
export function requireBinary(name: string): string {
  const known = binaryPaths.get(name);
  if (known) return known;
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = r.stdout.trim();
  if (r.status !== 0 || !path) {
    throw new Error(
      `${name} is not installed; run scripts/install-system-deps.sh (or make test), which apt-get installs it`,
    );
  }
  binaryPaths.set(name, path);
  return path;
}

/** Binaries found so far: a shell per lookup, for each of hundreds of amtool runs, is waste. */
const binaryPaths = new Map<string, string>();

/** Result of a finished command. */
export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** How long one tool run may take before it counts as hung and is killed. */
const TOOL_HANG_GUARD_MS = 600_000;

/** Runs a binary to completion (promtool, amtool) and returns its output. */
export function runTool(name: string, args: readonly string[], opts: { cwd?: string; input?: string } = {}): RunResult {
  const r = spawnSync(requireBinary(name), args, {
    encoding: 'utf8',
    cwd: opts.cwd,
    input: opts.input,
    // A hang guard, not a bound on speed: `promtool test rules` is seconds of CPU on a quiet
    // machine, and took over the minute this was at a load of 21 on two cores (then killed, it
    // failed a check that was right).
    timeout: TOOL_HANG_GUARD_MS,
  });
  const killed = r.signal ? `\n${name} was killed by ${r.signal}${r.error ? ` (${r.error.message})` : ''}` : '';
  return { status: r.status, stdout: r.stdout ?? '', stderr: `${r.stderr ?? ''}${killed}` };
}

/** A long-running binary under test: its output is kept so a failing test can print it. */
export class ManagedProcess {
  private child: ChildProcess | undefined;
  private output: string[] = [];

  constructor(
    readonly name: string,
    private readonly binary: string,
    private readonly args: readonly string[],
    private readonly cwd?: string,
    /** Environment of the child. @default the test process's environment */
    private readonly env?: NodeJS.ProcessEnv,
  ) {}

  /** Starts the process (again, after `stop`), with `extraArgs` after its own this time. */
  start(extraArgs: readonly string[] = []): void {
    if (this.running) throw new Error(`${this.name} already running`);
    const child = spawn(requireBinary(this.binary), [...this.args, ...extraArgs], {
      cwd: this.cwd,
      env: this.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (b: Buffer) => {
      this.output.push(b.toString());
      if (this.output.length > 2000) this.output.splice(0, 1000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.child = child;
  }

  /** The process's output so far (for failure reports). */
  logs(): string {
    return this.output.join('');
  }

  /** The last `lines` lines of output, for failure reports that must stay readable. */
  tail(lines = 60): string {
    const all = this.logs().split('\n');
    return all.slice(-lines - 1).join('\n');
  }

  /** Exit code or signal of a process that has stopped, e.g. `exit 1` or `signal SIGKILL`; undefined while it runs. */
  get exitStatus(): string | undefined {
    const c = this.child;
    if (!c || this.running) return undefined;
    return c.signalCode ? `signal ${c.signalCode}` : `exit ${c.exitCode}`;
  }

  /** The process id while it runs (benchmarks read its CPU time). */
  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  /** True while the process runs. */
  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL now, without waiting: a last resort when the test process itself exits. */
  killNow(): void {
    if (this.running) this.child?.kill('SIGKILL');
  }

  /** Stops the process (SIGTERM, then SIGKILL after `graceMs`) and waits for it to exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * valkey-server 8.0 (Redis 7.2-compatible: WAITAOF), for the durability levels Debian's
 * redis-server 7.0 cannot give: `VALKEY_SERVER`, else the copy scripts/fetch-valkey.sh unpacks
 * into .cache/valkey/ (`make test` runs it), else `valkey-server` on the PATH. Missing, it throws:
 * these tests fail, they never skip.
 */
export function valkeyServer(): string {
  const candidates = [
    process.env.VALKEY_SERVER,
    resolve(__dirname, '..', '..', '.cache', 'valkey', 'usr', 'bin', 'valkey-server'),
  ];
  for (const c of candidates) if (c && existsSync(c)) return c;
  const r = spawnSync('sh', ['-c', 'command -v valkey-server'], { encoding: 'utf8' });
  if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  throw new Error(
    'valkey-server (Redis 7.2-compatible, for WAITAOF) is missing: run scripts/fetch-valkey.sh (make test does), ' +
      "which unpacks Debian bookworm-backports' valkey-server into .cache/valkey/, or set VALKEY_SERVER to a valkey-server or redis-server >= 7.2",
  );
}
