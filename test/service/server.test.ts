import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Router } from 'express';
import { listen } from '../../service/server';
import { freePort, waitFor } from '../harness/ports';
import { buildTestApp } from '../helpers/app';

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
      { features: { router, cache: { size: () => 0, maxSize: () => 1 }, start: async () => undefined, close: async () => undefined } },
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
    expect(running.server.listening).toBe(false);
  });

  it('does not wait past SHUTDOWN_TIMEOUT_SECONDS for a stuck request', async () => {
    const router = Router();
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    router.get('/api/stuck', () => entered()); // never answers
    const t = await buildTestApp(
      { service: { shutdownTimeoutSeconds: 0 } },
      { features: { router, cache: { size: () => 0, maxSize: () => 1 }, start: async () => undefined, close: async () => undefined } },
    );
    const running = await listen(t.app, t.deps, 0, '127.0.0.1');
    const stuck = get(running.port, '/api/stuck').catch((e: Error) => e);
    await inside;
    await running.shutdown();
    expect(String(await stuck)).toMatch(/socket hang up|ECONNRESET/); // connection closed by the server
  });
});

describe('the service process', () => {
  const root = join(__dirname, '..', '..');

  it('refuses to start on a bad setting, naming it', async () => {
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'service/main.ts'], {
      cwd: root,
      env: { ...process.env, RATE_LIMIT_IP_REQUESTS: 'abc', PORT: '0' },
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code).toBe(2);
    expect(stderr).toContain('RATE_LIMIT_IP_REQUESTS="abc" is not valid: expected an integer');
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('serves on PORT and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const dataDir = join(root, '.tmp', `main-${port}`);
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'service/main.ts'], {
      cwd: root,
      env: { ...process.env, PORT: String(port), LOG_LEVEL: 'info', DATA_DIR: dataDir },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    // Starting under ts-node takes seconds on a loaded machine; a process that exits fails at once.
    await Promise.race([
      waitFor('"msg":"ready"', () => stdout.includes('"msg":"ready"'), { timeoutMs: 45_000, intervalMs: 50 }),
      exited.then((code) => Promise.reject(new Error(`exited with ${code}`))),
    ]).catch((err: Error) => {
      child.kill('SIGKILL');
      throw new Error(`the service did not get ready: ${err.message}\n${stdout}\n${stderr}`);
    });
    expect((await get(port, '/health/live')).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toContain('"msg":"stopped"');
    // Logs are JSON lines.
    for (const line of stdout.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);
});
