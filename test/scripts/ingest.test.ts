import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { IngestError, ingestFolder, parseArgs } from '../../scripts/ingest';
import { ServiceProcess } from '../../tools/harness/service-process';

const TOKEN = 'x'.repeat(32);

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

function output(): PassThrough & { text(): string } {
  const s = new PassThrough();
  const chunks: string[] = [];
  s.on('data', (c: Buffer) => chunks.push(c.toString()));
  return Object.assign(s, { text: () => chunks.join('') });
}

/** The real service process, staging settings with a write token. */
function startService(dataDir: string, extra: Record<string, string> = {}): Promise<ServiceProcess> {
  return ServiceProcess.start({
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ENVIRONMENT: 'staging',
      API_TOKEN: TOKEN,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...extra,
    },
  });
}

describe('npm run ingest, against the real service process', () => {
  let dir: string;
  let dataDir: string;
  let svc: ServiceProcess;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ingest-'));
    mkdirSync(join(dir, 'notes'));
    for (let i = 0; i < 1000; i++) {
      writeFileSync(
        join(dir, 'notes', `note-${i}.md`),
        `---\ntitle: Note ${i}\ntags: [notes]\n---\nBody of note number ${i} about kubernetes.\n`,
      );
    }
    writeFileSync(join(dir, 'broken.json'), '{ not json');
    writeFileSync(join(dir, 'skip.bin'), 'ignored');
    dataDir = mkdtempSync(join(tmpdir(), 'ingest-data-'));
    svc = await startService(dataDir, { RATELIMIT_ENABLED: 'false' });
    url = svc.url;
  }, 60000);

  afterAll(async () => {
    await svc?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ingests 1,000 files, reports the bad one, and a re-run makes no duplicates', async () => {
    const out = output();
    const first = await ingestFolder({ dir, url, token: TOKEN, out });
    expect(first.files).toBe(1001);
    expect(first.stored).toBe(1000);
    expect(first.failed).toEqual([{ file: 'broken.json', reason: expect.any(String) }]);
    expect(out.text()).toMatch(/ingest: 1000\/1000 items/);
    expect(out.text()).toMatch(/failed: broken\.json/);
    expect(first).toMatchObject({ created: 1000, updated: 0, unchanged: 0 });
    expect(out.text()).toMatch(/1000 created, 0 updated, 0 unchanged, 1 failed/);
    const again = await ingestFolder({ dir, url, token: TOKEN, out: output() });
    expect(again).toMatchObject({ stored: 1000, created: 0, updated: 0, unchanged: 1000 });
    expect((await svc.request('/health')).json<{ content: { items: number } }>().content.items).toBe(1000);
    // One file edited: one update, the rest unchanged.
    writeFileSync(join(dir, 'notes', 'note-7.md'), '---\ntitle: Note 7\ntags: [notes]\n---\nAn edited body.\n');
    const third = await ingestFolder({ dir, url, token: TOKEN, out: output() });
    expect(third).toMatchObject({ created: 0, updated: 1, unchanged: 999 });
    writeFileSync(
      join(dir, 'notes', 'note-7.md'),
      '---\ntitle: Note 7\ntags: [notes]\n---\nBody of note number 7 about kubernetes.\n',
    );
  });

  it('stops at the first batch with a clear message on a wrong or missing token', async () => {
    await expect(ingestFolder({ dir, url, token: 'wrong', out: output() })).rejects.toThrow(
      /40[13] from .*token was refused/,
    );
    await expect(ingestFolder({ dir, url, token: '', out: output() })).rejects.toBeInstanceOf(IngestError);
  });

  it('keeps going through a real service that throttles: each 429 waits its Retry-After', async () => {
    const small = mkdtempSync(join(tmpdir(), 'ingest-throttled-'));
    const throttledData = mkdtempSync(join(tmpdir(), 'ingest-throttled-data-'));
    for (let i = 0; i < 3; i++) writeFileSync(join(small, `t-${i}.md`), `# Throttled ${i}\n\ntext ${i}`);
    // One write a second, no burst: three batches in a row meet at least one 429.
    const throttled = await startService(throttledData, {
      RATE_LIMIT_UPLOAD_REQUESTS: '60',
      RATE_LIMIT_UPLOAD_WINDOW: '60',
      RATE_LIMIT_UPLOAD_BURST: '1',
    });
    const waits: number[] = [];
    const sleep = (ms: number) => {
      waits.push(ms);
      return new Promise<void>((r) => setTimeout(r, ms));
    };
    try {
      const out = output();
      const s = await ingestFolder({ dir: small, url: throttled.url, token: TOKEN, out, sleep, batchSize: 1 });
      expect(s).toMatchObject({ stored: 3, created: 3, failed: [] });
      expect(waits.length).toBeGreaterThan(0);
      expect(waits.every((ms) => ms >= 1000)).toBe(true);
      expect(out.text()).toMatch(/waiting \d+s/);
    } finally {
      await throttled.stop();
      rmSync(small, { recursive: true, force: true });
      rmSync(throttledData, { recursive: true, force: true });
    }
  }, 60000);

  it('waits for Retry-After on 429 and retries network errors, then fails clearly', async () => {
    let calls = 0;
    const throttling = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        calls++;
        if (calls === 1) {
          res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '3' });
          res.end('{"error":"rate_limited","message":"slow down"}');
        } else {
          res.writeHead(201, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ stored: 1, failed: 0, results: [{ index: 0, status: 'stored', id: 'a' }] }));
        }
      });
    });
    const small = mkdtempSync(join(tmpdir(), 'ingest-small-'));
    writeFileSync(join(small, 'a.md'), '# A\n\ntext');
    const waits: number[] = [];
    const sleep = async (ms: number) => void waits.push(ms);
    try {
      const base = await listen(throttling);
      const out = output();
      const s = await ingestFolder({ dir: small, url: base, token: TOKEN, out, sleep });
      expect(s.stored).toBe(1);
      expect(waits).toEqual([3000]);
      expect(out.text()).toMatch(/waiting 3s/);
      await new Promise((r) => throttling.close(r));
      await expect(
        ingestFolder({ dir: small, url: base, token: TOKEN, out: output(), sleep, retries: 2 }),
      ).rejects.toThrow(/cannot reach .* after 3 tries/);
    } finally {
      rmSync(small, { recursive: true, force: true });
    }
  });

  it('--prune with --tag mirrors a folder: what left the folder is deleted, nothing outside the tag is touched', async () => {
    const mirror = mkdtempSync(join(tmpdir(), 'ingest-mirror-'));
    const items = () => svc.request('/health').then((r) => r.json<{ content: { items: number } }>().content.items);
    try {
      for (const n of ['alpha', 'beta', 'gamma'])
        writeFileSync(join(mirror, `${n}.md`), `# Mirror ${n}\n\ntext of ${n}`);
      const before = await items();
      const first = await ingestFolder({ dir: mirror, url, token: TOKEN, tag: 'mirrored', prune: true, out: output() });
      expect(first).toMatchObject({ created: 3, deleted: [], failed: [] });
      expect(await items()).toBe(before + 3);
      expect((await svc.request('/api/v1/articles/alpha')).json<{ tags: string[] }>().tags).toEqual(['mirrored']);
      rmSync(join(mirror, 'gamma.md'));
      // A dry run says what would go and deletes nothing.
      const dry = output();
      await ingestFolder({ dir: mirror, url, token: TOKEN, tag: 'mirrored', prune: true, dryRun: true, out: dry });
      expect(dry.text()).toMatch(/prune \(tag mirrored\): 1 items no longer in the folder \(dry run/);
      expect((await svc.request('/api/v1/articles/gamma')).status).toBe(200);
      const out = output();
      const second = await ingestFolder({ dir: mirror, url, token: TOKEN, tag: 'mirrored', prune: true, out });
      expect(second).toMatchObject({ unchanged: 2, deleted: ['gamma'] });
      expect(out.text()).toMatch(/1 deleted, 0 not found/);
      expect((await svc.request('/api/v1/articles/gamma')).status).toBe(404);
      expect(await items()).toBe(before + 2);
      // An item that fails: nothing is pruned (its stored version must not go for a typo).
      writeFileSync(join(mirror, 'beta.md'), '---\ntitle: [unclosed\n---\nbroken');
      rmSync(join(mirror, 'alpha.md'));
      const skipped = output();
      const third = await ingestFolder({ dir: mirror, url, token: TOKEN, tag: 'mirrored', prune: true, out: skipped });
      expect(third.deleted).toEqual([]);
      expect(skipped.text()).toMatch(/not pruned: 1 items failed/);
      expect(await items()).toBe(before + 2);
    } finally {
      rmSync(mirror, { recursive: true, force: true });
    }
  });

  it('--prune by type deletes the items of the type the folder no longer holds; --delete deletes ids', async () => {
    const projects = mkdtempSync(join(tmpdir(), 'ingest-projects-'));
    try {
      for (const n of ['one', 'two']) writeFileSync(join(projects, `${n}.md`), `# Project ${n}\n\nabout ${n}`);
      const articles = () => svc.request('/api/v1/articles').then((r) => r.json<{ total: number }>().total);
      const articlesBefore = await articles();
      await ingestFolder({ dir: projects, url, token: TOKEN, type: 'project', out: output() });
      rmSync(join(projects, 'two.md'));
      const pruned = await ingestFolder({
        dir: projects,
        url,
        token: TOKEN,
        type: 'project',
        prune: true,
        out: output(),
      });
      expect(pruned.deleted).toEqual(['two']);
      // The articles (another type) are untouched.
      expect(await articles()).toBe(articlesBefore);
      const out = output();
      const del = await ingestFolder({ url, token: TOKEN, delete: ['one', 'never-was'], out });
      expect(del).toMatchObject({ files: 0, deleted: ['one'], notFound: ['never-was'] });
      expect(out.text()).toMatch(/not found: never-was/);
      expect((await svc.request('/api/v1/projects')).json<{ total: number }>().total).toBe(0);
    } finally {
      rmSync(projects, { recursive: true, force: true });
    }
  });

  it('parses its arguments', () => {
    expect(parseArgs(['--delete', 'a', 'b', '--url', 'http://x'])).toEqual({ delete: ['a', 'b'], url: 'http://x' });
    expect(parseArgs(['./notes', '--prune', '--tag', 'notes'])).toEqual({ dir: './notes', prune: true, tag: 'notes' });
    expect(() => parseArgs(['--prune'])).toThrow(/give DIR/);
    expect(() => parseArgs(['./notes', '--delete'])).toThrow(/at least one id/);
    expect(parseArgs(['./notes', '--url', 'http://x', '--type', 'project', '--dry-run'])).toEqual({
      dir: './notes',
      url: 'http://x',
      type: 'project',
      dryRun: true,
    });
    expect(() => parseArgs([])).toThrow(/usage/);
  });
});
