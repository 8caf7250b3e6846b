import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { OutputLines, describeMatch, lineMatches, type LineMatch } from './output-lines';

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

/** Options of `ManagedProcess.logged`. */
export interface LoggedOptions {
  /**
   * A hang guard, not a bound on speed: how long to wait for the line while the process runs.
   * @default 60 s (LOGGED_HANG_GUARD_MS)
   */
  readonly timeoutMs?: number;
  /** What the line is, for the failure message. @default the match itself */
  readonly what?: string;
}

/** How long `logged` waits for a line while the process runs: the readiness wait's hang guard. */
export const LOGGED_HANG_GUARD_MS = 60_000;

/** How long `stop` waits, after the exit, for the output's pipes to be read to their end. */
const OUTPUT_CLOSE_HANG_GUARD_MS = 30_000;

/**
 * A long-running binary under test: its output is kept so a test can await a line of it
 * (`logged`) and a failing test can print it.
 */
export class ManagedProcess {
  private child: ChildProcess | undefined;
  private readonly output = new OutputLines();
  /** Resolves when the current run has exited and its output has been read to the end. */
  private closed: Promise<void> = Promise.resolve();
  /** True from a start until that run's output has ended ('close'): more lines may come. */
  private outputOpen = false;
  /** Called when the current run's output ends (no line can come any more). */
  private readonly closeListeners = new Set<() => void>();
  /** The number of the current run's first line in `output`: `logged` looks from there on. */
  private runFrom = 0;

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
    this.runFrom = this.output.count;
    for (const stream of [child.stdout, child.stderr]) {
      const reader = this.output.reader();
      stream?.on('data', (b: Buffer) => reader.write(b));
      stream?.on('end', () => reader.end());
      stream?.on('close', () => reader.end()); // destroyed by `stop`'s guard: no 'end' comes
    }
    // 'close' comes after 'exit' and after every pipe has been read to its end: only then is the
    // output whole (at 'exit' the last lines may still be in the pipe).
    this.closed = new Promise((resolve) =>
      child.once('close', () => {
        resolve();
        if (this.child !== child) return; // an earlier run's pipes, closing after a restart
        this.outputOpen = false;
        for (const listener of [...this.closeListeners]) listener();
      }),
    );
    this.child = child;
    this.outputOpen = true;
  }

  /** The process's output so far, every run's (for failure reports; await lines with `logged`). */
  logs(): string {
    return this.output.text();
  }

  /** The last `lines` lines of output, for failure reports that must stay readable. */
  tail(lines = 60): string {
    const all = this.logs().split('\n');
    return all.slice(-lines - 1).join('\n');
  }

  /**
   * The first line of output of the current run (from the latest `start` on, stdout or stderr)
   * that passes `match`, as soon as it has been read: at once if it already was, else when it
   * arrives. An earlier run's lines never match: after a restart, the line awaited is this run's,
   * not the same message printed by the run before. The output reaches the test
   * through a pipe, which is read independently of the sockets the test talks to the process on,
   * so after an answer from the process its log line may not have been read yet: await it here
   * rather than reading `logs()` once. Rejects, with the process's last lines, when the process's
   * output has ended without such a line, or after `timeoutMs` (a hang guard) while it runs.
   */
  logged(match: LineMatch, opts: LoggedOptions = {}): Promise<string> {
    const found = this.output.find(match, this.runFrom);
    if (found !== undefined) return Promise.resolve(found);
    const what = opts.what ?? describeMatch(match);
    const timeoutMs = opts.timeoutMs ?? LOGGED_HANG_GUARD_MS;
    return new Promise((resolve, reject) => {
      const settle = () => {
        stopListening();
        this.closeListeners.delete(ended);
        clearTimeout(timer);
      };
      const fail = (why: string) => {
        settle();
        const dropped = this.output.droppedLines
          ? ` (${this.output.droppedLines} of its oldest lines were not kept)`
          : '';
        reject(new Error(`${this.name} ${why} without printing ${what}${dropped}; its last lines:\n${this.tail(30)}`));
      };
      const stopListening = this.output.onLine((line) => {
        if (!lineMatches(match, line)) return;
        settle();
        resolve(line);
      });
      const ended = () => fail(`stopped (${this.exitStatus ?? 'not started'})`);
      const timer = setTimeout(() => fail(`ran ${timeoutMs / 1000} s (a hang guard)`), timeoutMs);
      if (!this.outputOpen) ended();
      else this.closeListeners.add(ended);
    });
  }

  /**
   * Waits until the process has exited on its own and its output has been read to its end (so
   * `logs()` is whole), and returns its exit status (`exit 2`, `signal SIGKILL`). Rejects after
   * `timeoutMs` (a hang guard) while it still runs.
   */
  async exited(timeoutMs = LOGGED_HANG_GUARD_MS): Promise<string> {
    if (!this.child) throw new Error(`${this.name} was never started`);
    await this.closedWithin(timeoutMs, () => {
      throw new Error(`${this.name} still running after ${timeoutMs / 1000} s (a hang guard):\n${this.tail(30)}`);
    });
    return this.exitStatus as string;
  }

  /**
   * Awaits the current run's 'close' (exited, output read to its end), or `atGuard` after `ms`
   * (a hang guard) if that comes first: what it throws rejects, else the wait ends there.
   */
  private async closedWithin(ms: number, atGuard: () => void): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const guard = new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => {
        try {
          atGuard();
          resolve();
        } catch (e) {
          reject(e as Error);
        }
      }, ms);
    });
    try {
      await Promise.race([this.closed, guard]);
    } finally {
      clearTimeout(timer);
    }
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

  /**
   * Stops the process (SIGTERM, then SIGKILL after `graceMs`) and waits for it to exit and for
   * its output to be read to the end (so `logs()` holds its last lines).
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    // A child of the process (redis-server's BGSAVE fork) that still holds a pipe keeps 'close'
    // back; past the guard the pipes are let go, and the output is what was read.
    await this.closedWithin(OUTPUT_CLOSE_HANG_GUARD_MS, () => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    });
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
