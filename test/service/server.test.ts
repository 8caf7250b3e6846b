import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { Router } from 'express';
import { SettingsError, loadSettings, parseSettings } from '../../configs';
import { openApiDocument } from '../../service/http/contract/openapi';
import { listen, type RunningServer } from '../../service/server';
import { freePort, waitFor } from '../../tools/harness/ports';
import { TS_LOADER_ARGS } from '../../tools/harness/service-process';
import { buildTestApp, type TestApp } from '../helpers/app';
import { parseAnswer } from '../helpers/raw-http';

/** GET on 127.0.0.1, resolving with status and body. */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends an upload whose body ends inside a file part and resolves with the raw answer. */
function truncatedUpload(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const body =
      '--B\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello';
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (b: Buffer) => (text += b.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    socket.write(
      `POST /api/upload HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
  });
}

describe('graceful shutdown', () => {
  it('goes unready, lets in-flight requests finish, refuses new connections, closes deps', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const router = Router();
    router.get('/api/slow', async (_req, res) => {
      entered();
      await gate;
      res.json({ done: true });
    });
    const t = await buildTestApp(
      {},
      {
        features: {
          router,
          cache: { size: () => 0, maxSize: () => 1 },
          start: async () => undefined,
          close: async () => undefined,
        },
      },
    );
    const running = await listen(t.app, t.deps, 0, '127.0.0.1');
    const slow = get(running.port, '/api/slow');
    await inside;
    const stopping = running.shutdown();
    expect(t.deps.lifecycle.state).toBe('draining');
    await expect(get(running.port, '/health/ready')).rejects.toThrow(); // listener closed
    release();
    expect(await slow).toEqual({ status: 200, body: '{"done":true}' });
    await stopping;
    t.removeDataDir();
    expect(running.server.listening).toBe(false);
  });

  it('does not wait past SHUTDOWN_TIMEOUT_SECONDS for a stuck request', async () => {
    const router = Router();
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    router.get('/api/stuck', () => entered()); // never answers
    const t = await buildTestApp(
      { service: { shutdownTimeoutSeconds: 0 } },
      {
        features: {
          router,
          cache: { size: () => 0, maxSize: () => 1 },
          start: async () => undefined,
          close: async () => undefined,
        },
      },
    );
    const running = await listen(t.app, t.deps, 0, '127.0.0.1');
    const stuck = get(running.port, '/api/stuck').catch((e: Error) => e);
    await inside;
    await running.shutdown();
    t.removeDataDir();
    expect(String(await stuck)).toMatch(/socket hang up|ECONNRESET/); // connection closed by the server
  });
});

describe('request timeouts', () => {
  it('apply REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS and KEEP_ALIVE_TIMEOUT_MS to the server', async () => {
    const t = await buildTestApp({
      service: { requestTimeoutMs: 20_000, headersTimeoutMs: 5000, keepAliveTimeoutMs: 61_000 },
    });
    const running = await listen(t.app, t.deps, 0, '127.0.0.1');
    try {
      expect(running.server.requestTimeout).toBe(20_000);
      expect(running.server.headersTimeout).toBe(5000);
      expect(running.server.keepAliveTimeout).toBe(61_000);
    } finally {
      await running.shutdown();
      t.removeDataDir();
    }
  });

  it('a client that trickles its body gets 408 and its connection closed, not held for minutes', async () => {
    const t = await buildTestApp({
      service: { environment: 'testing', requestTimeoutMs: 1000, headersTimeoutMs: 1000 },
    });
    const running = await listen(t.app, t.deps, 0, '127.0.0.1');
    try {
      const socket = connect(running.port, '127.0.0.1');
      let text = '';
      socket.on('data', (b: Buffer) => (text += b.toString()));
      socket.write(
        'POST /api/ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
      );
      // One byte every 200 ms: never idle long enough for a socket timeout, never done.
      const drip = setInterval(() => socket.write(' '), 200);
      await new Promise<void>((r) => socket.on('close', () => r()));
      clearInterval(drip);
      expect(text).toMatch(/^HTTP\/1\.1 408/);
      expectJsonRefusal(text, 408, 'request_timeout', 'body');
    } finally {
      await running.shutdown();
      t.removeDataDir();
    }
  });

  it('a headers timeout above the request timeout is refused at start, naming both', () => {
    expect(() => loadSettings({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' })).toThrow(SettingsError);
    try {
      parseSettings({ service: { requestTimeoutMs: 5000, headersTimeoutMs: 6000 } });
      throw new Error('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(SettingsError);
      expect((e as SettingsError).code).toBe('ERR_SETTINGS_CONFLICT');
      expect((e as SettingsError).issues[0]).toMatchObject({ variable: 'HEADERS_TIMEOUT_MS', value: '6000' });
      expect((e as SettingsError).message).toMatch(/HEADERS_TIMEOUT_MS=6000 is above REQUEST_TIMEOUT_MS=5000/);
    }
    expect(() => loadSettings({ REQUEST_TIMEOUT_MS: '10ms' })).toThrow(
      /REQUEST_TIMEOUT_MS="10ms" is not valid: expected an integer from 1000/,
    );
  });
});

/** Writes `head` (and whatever `more` sends) on a raw socket; resolves with everything read until the server closes. */
function rawExchange(port: number, head: string, more?: (socket: Socket) => () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    // Listeners are added in this turn, before any event of the socket can fire.
    socket.write(head);
    const stop = more?.(socket);
    socket.on('data', (b: Buffer) => (text += b.toString()));
    socket.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' && text ? undefined : reject(e)));
    socket.on('close', () => {
      stop?.();
      resolve(text);
    });
  });
}

/** Asserts a raw answer is our JSON error shape with this status, code and field. */
function expectJsonRefusal(text: string, status: number, error: string, field: string): void {
  const a = parseAnswer(text);
  expect(a).toBeDefined();
  expect(a!.status).toBe(status);
  expect(a!.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(Number(a!.headers['content-length'])).toBe(Buffer.byteLength(a!.body));
  const body = JSON.parse(a!.body) as Record<string, unknown>;
  expect(body).toMatchObject({ error, field });
  expect(typeof body.message).toBe('string');
  // The document lists the status for every operation, with the error schema (issue 37).
  const doc = openApiDocument() as {
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
  };
  for (const ops of Object.values(doc.paths))
    for (const op of Object.values(ops))
      expect(op.responses[String(status)]?.content?.['application/json']).toBeDefined();
}

describe('refusals Node makes before a route runs are JSON (issue 37, row 7), on a real listening server', () => {
  let t: TestApp;
  let running: RunningServer;
  beforeAll(async () => {
    // Short timeouts so a test waits about a second for each: the same code paths as the defaults.
    t = await buildTestApp({ service: { environment: 'testing', requestTimeoutMs: 1000, headersTimeoutMs: 1000 } });
    running = await listen(t.app, t.deps, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await running.shutdown();
    t.removeDataDir();
  });

  it('answers a 20 KB query string with 431 in our error shape, not a bare status line', async () => {
    const text = await rawExchange(running.port, `GET /api/search?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectJsonRefusal(text, 431, 'headers_too_large', 'headers');
    expect(JSON.parse(parseAnswer(text)!.body).message).toMatch(/over 16384 bytes/);
  });

  it('answers oversized headers with 431 in our error shape', async () => {
    const text = await rawExchange(
      running.port,
      `GET /api/search?q=a HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
    );
    expectJsonRefusal(text, 431, 'headers_too_large', 'headers');
  });

  it('answers a chunked body that never ends with 408 in our error shape (REQUEST_TIMEOUT_MS)', async () => {
    const text = await rawExchange(
      running.port,
      'POST /api/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n',
      (socket) => {
        // A chunk every 200 ms: never idle long enough for a socket timeout, never done.
        const drip = setInterval(() => socket.write('1\r\n \r\n'), 200);
        return () => clearInterval(drip);
      },
    );
    expectJsonRefusal(text, 408, 'request_timeout', 'body');
    expect(JSON.parse(parseAnswer(text)!.body).message).toMatch(/REQUEST_TIMEOUT_MS/);
  });

  it('answers headers that never end with 408 in our error shape (HEADERS_TIMEOUT_MS)', async () => {
    const text = await rawExchange(running.port, 'GET /api/search?q=a HTTP/1.1\r\nHost: x\r\n', (socket) => {
      const drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 200);
      return () => clearInterval(drip);
    });
    expectJsonRefusal(text, 408, 'request_timeout', 'headers');
    expect(JSON.parse(parseAnswer(text)!.body).message).toMatch(/HEADERS_TIMEOUT_MS/);
  });

  it('answers malformed HTTP with 400 in our error shape', async () => {
    const text = await rawExchange(running.port, 'GET /api/search?q=a HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    const a = parseAnswer(text)!;
    expect(a.status).toBe(400);
    expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(a.body)).toMatchObject({ error: 'bad_request', field: 'request' });
  });

  it('still serves ordinary requests on the same server', async () => {
    expect((await get(running.port, '/health/live')).status).toBe(200);
  });
});

describe('the service process', () => {
  const root = join(__dirname, '..', '..');

  it('refuses to start on a bad setting, naming it', async () => {
    const child = spawn(process.execPath, [...TS_LOADER_ARGS, 'service/main.ts'], {
      cwd: root,
      env: { ...process.env, RATE_LIMIT_IP_REQUESTS: 'abc', PORT: '0' },
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    // 'close', not 'exit': at 'exit' the last of stderr may still be in the pipe.
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    expect(code).toBe(2);
    expect(stderr).toContain('RATE_LIMIT_IP_REQUESTS="abc" is not valid: expected an integer');
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
  }, 120_000); // a hang guard: a start that is refused still loads the service (seconds of CPU; over 30 s at a load of 17 on 2 cores)

  it('refuses to start on a malformed synonyms file, naming the variable, the file and the line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'synonyms-main-'));
    const file = join(dir, 'synonyms.txt');
    writeFileSync(file, '# ours\ncar, automobile\nphone =>\n');
    try {
      const child = spawn(process.execPath, [...TS_LOADER_ARGS, 'service/main.ts'], {
        cwd: root,
        // A free port: were the file accepted, the process would serve there (and the test fail).
        env: {
          ...process.env,
          SEARCH_SYNONYMS_FILE: file,
          PORT: String(await freePort()),
          DATA_DIR: join(dir, 'data'),
        },
      });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
      expect(code).toBe(2);
      expect(stderr).toContain(`SEARCH_SYNONYMS_FILE=${JSON.stringify(file)} line 3: "phone =>" has nothing after =>`);
      expect(stderr).toContain("expected a readable file in Solr's synonyms format");
      expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000); // a hang guard, as above

  it('serves on PORT and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const dataDir = join(root, '.tmp', `main-${port}`);
    const child = spawn(process.execPath, [...TS_LOADER_ARGS, 'service/main.ts'], {
      cwd: root,
      env: { ...process.env, PORT: String(port), LOG_LEVEL: 'info', DATA_DIR: dataDir },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    // The end with all output read ('close'): at 'exit' the "stopped" line may still be in the pipe.
    const exited = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    // Starting takes seconds on a loaded machine; a process that exits fails at once.
    await Promise.race([
      waitFor('"msg":"ready"', () => stdout.includes('"msg":"ready"'), { timeoutMs: 110_000, intervalMs: 50 }),
      exited.then((code) => Promise.reject(new Error(`exited with ${code}`))),
    ]).catch((err: Error) => {
      child.kill('SIGKILL');
      throw new Error(`the service did not get ready: ${err.message}\n${stdout}\n${stderr}`);
    });
    expect((await get(port, '/health/live')).status).toBe(200);
    // A multipart body cut off before its closing boundary (no token needed in development) is
    // that request's 400, not the end of the process.
    const cut = await truncatedUpload(port);
    expect(cut).toMatch(/^HTTP\/1\.1 400/);
    expect((await get(port, '/health/live')).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toContain('"msg":"stopped"');
    // Logs are JSON lines.
    for (const line of stdout.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    rmSync(dataDir, { recursive: true, force: true });
  }, 150_000);
});
