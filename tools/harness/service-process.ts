import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { resolve } from 'node:path';
import { ManagedProcess, type LoggedOptions } from './binary';
import type { LineMatch } from './output-lines';
import { contractProblem, contractProblemsSeen } from '../validate/openapi-answers';
import { freePort, waitFor } from './ports';

/** How long a request may go without a byte before it counts as hung. */
const REQUEST_HANG_GUARD_MS = 60_000;

/** The repository root (where `service/main.ts` and `node_modules/` are). */
export const REPO_ROOT = resolve(__dirname, '..', '..');

/**
 * node's arguments that load TypeScript in a child process (the service, a script): ts-node's
 * transpile-only SWC output, with the output of each file kept between starts (ts-register.js).
 */
export const TS_LOADER_ARGS: readonly string[] = ['-r', resolve(__dirname, 'ts-register.js')];

/** A finished HTTP exchange with the service. */
export interface ServiceResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON (throws when it is not JSON). */
  json<T = unknown>(): T;
}

/** Options of one request to the service. */
export interface ServiceRequestOptions {
  /** @default 'GET' */
  readonly method?: string;
  /**
   * Loopback source address to connect from, e.g. `127.0.0.5` (Linux routes all of 127.0.0.0/8
   * to lo). The service then sees that client address without trusting any proxy header, so a
   * test can be "one client" without sharing limits with the others.
   * @default the kernel's choice (127.0.0.1)
   */
  readonly from?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as is when a string or a Buffer, else JSON-encoded. */
  readonly body?: unknown;
}

/** How to start the service. */
export interface ServiceProcessOptions {
  /** The child's whole environment (PORT is set from `port`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** @default a free port */
  readonly port?: number;
}

/**
 * The real service as a child process: `node -r tools/harness/ts-register.js service/main.ts`
 * (`TS_LOADER_ARGS`: what `-r ts-node/register/transpile-only` did, cached), exactly what `main`
 * does in production minus the build step (transpile-only: types are the typecheck's job). Ready means `/health/ready` answers 200.
 */
export class ServiceProcess {
  readonly process: ManagedProcess;

  private constructor(
    readonly port: number,
    env: Readonly<Record<string, string | undefined>>,
  ) {
    this.process = new ManagedProcess('service', 'node', [...TS_LOADER_ARGS, 'service/main.ts'], REPO_ROOT, {
      ...env,
      PORT: String(port),
    });
  }

  /** Starts the service and waits until it is ready. */
  static async start(opts: ServiceProcessOptions): Promise<ServiceProcess> {
    const svc = new ServiceProcess(opts.port ?? (await freePort()), opts.env);
    await svc.restart();
    return svc;
  }

  /**
   * Starts several services at once (replicas start together, as pods do; each start is seconds
   * of module loading) and waits until all are ready. If one fails, the others are stopped and
   * the first failure is thrown.
   */
  static async startAll(opts: readonly ServiceProcessOptions[]): Promise<ServiceProcess[]> {
    const settled = await Promise.allSettled(opts.map((o) => ServiceProcess.start(o)));
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    const started = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    if (!failed) return started;
    await Promise.all(started.map((x) => x.stop().catch(() => undefined)));
    throw failed.reason;
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** True while the process runs. */
  get running(): boolean {
    return this.process.running;
  }

  /**
   * The first log line that passes `match`, as soon as it has been read (`ManagedProcess.logged`):
   * an answer from the service comes through a socket and its log through a pipe, so a line the
   * service logged before answering may not have been read yet when the answer has.
   */
  logged(match: LineMatch, opts?: LoggedOptions): Promise<string> {
    return this.process.logged(match, opts);
  }

  /**
   * Starts it again on the same port (after `stop`) and waits until ready. A start that exits
   * first (a bad setting, a crash) fails at once, with the process's output read to its end.
   */
  async restart(): Promise<void> {
    this.process.start();
    const outcome = await waitFor(
      'the service to be ready (/health/ready 200)',
      async () => {
        // Returned, not thrown: waitFor counts a throwing check as "not yet" and would wait out its limit.
        if (!this.process.running) return 'exited';
        return (await this.request('/health/ready')).status === 200 ? 'ready' : undefined;
      },
      // A refused connection costs nothing: look often, every start of every test waits here. The
      // limit is a hang guard: a start takes a few seconds on a quiet machine.
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    if (outcome === 'exited') {
      const status = await this.process.exited();
      throw new Error(`service exited (${status}) before it was ready; its last lines:\n${this.process.tail(30)}`);
    }
  }

  /** One HTTP request on a fresh connection (no keep-alive pool survives a restart). */
  request(path: string, opts: ServiceRequestOptions = {}): Promise<ServiceResponse> {
    const payload =
      opts.body === undefined
        ? undefined
        : typeof opts.body === 'string' || Buffer.isBuffer(opts.body)
          ? opts.body
          : JSON.stringify(opts.body);
    const headers: Record<string, string> = { ...opts.headers };
    if (payload !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolvePromise, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: this.port,
          path,
          method: opts.method ?? 'GET',
          headers,
          localAddress: opts.from,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            // Every answer is proven against the OpenAPI document; the problems fail the test file.
            const problem = contractProblem({
              method: opts.method ?? 'GET',
              path,
              status: res.statusCode ?? 0,
              headers: res.headers,
              text,
            });
            if (problem) contractProblemsSeen.push(problem);
            resolvePromise({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text,
              json: <T>() => JSON.parse(text) as T,
            });
          });
        },
      );
      // A hang guard, not a bound on speed: with 2 cores and other work beside the suite, indexing
      // one 1 MB item took over 10 s, the guard this was (issue 36). What a request may cost is
      // judged inside the service (its event-loop figures), never by this client's clock.
      req.setTimeout(REQUEST_HANG_GUARD_MS, () =>
        req.destroy(new Error(`${opts.method ?? 'GET'} ${path}: no answer in ${REQUEST_HANG_GUARD_MS / 1000} s`)),
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Graceful stop (SIGTERM: drain, close, exit 0). */
  async stop(): Promise<void> {
    await this.process.stop('SIGTERM', 15000);
  }
}
