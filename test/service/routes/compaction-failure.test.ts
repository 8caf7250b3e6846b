import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { METRICS } from '../../../contract';

/** The counter's value in an exposition. */
function counterValue(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (!m) throw new Error(`no ${name} in the exposition`);
  return Number(m[1]);
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Issue 26, item 6, through the real app on a DATA_DIR: compaction made to fail by a directory
 * where it must create its new snapshot (EISDIR, a real filesystem fault). Before the fix, each of
 * these writes answered 500 although its record was in the log, and the in-memory copy did not serve it.
 */
describe('a failing DATA_DIR compaction', () => {
  let dataDir: string;
  let fault: string;
  const apps: TestApp[] = [];
  const start = async () => {
    // A 1 KiB threshold: the ten ~1.5 KiB writes below make compaction due from the first one on.
    const t = await buildTestApp({ service: { environment: 'testing', dataDir }, content: { compactionBytes: 1024 } });
    apps.push(t);
    return t;
  };
  const ingestTen = async (t: TestApp) => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await request(t.app)
        .post('/api/ingest')
        .send({
          id: `note-${i}`,
          type: 'article',
          title: `Note ${i}`,
          body: `Kingfishers dive for fish, note ${i}. `.repeat(40),
        });
      statuses.push(res.status);
    }
    return statuses;
  };
  const served = async (t: TestApp) => {
    const got = await Promise.all(
      Array.from({ length: 10 }, (_, i) => request(t.app).get(`/api/v1/articles/note-${i}`)),
    );
    return got.filter((r) => r.status === 200).length;
  };

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'compaction-failure-'));
    fault = join(dataDir, 'content-1.snapshot.tmp');
  });
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 201 for every stored write and serves them; /health and the counter tell; a restart keeps them', async () => {
    const t = await start();
    // Present at 0 before any failure, so the first one is an increase the alert sees.
    const first = (await request(t.app).get('/api/metrics/prometheus')).text;
    expect(counterValue(first, METRICS.contentCompactionFailuresTotal)).toBe(0);
    // The kvstore's write-confirmation gauge is not registered with content in DATA_DIR.
    expect(first).not.toContain(METRICS.kvstoreWriteConfirmation);
    mkdirSync(fault);
    expect(await ingestTen(t)).toEqual(Array(10).fill(201));
    expect(await served(t)).toBe(10);
    expect((await request(t.app).get('/api/search?q=kingfishers')).body.total).toBe(10);

    const health = (await request(t.app).get('/health')).body;
    expect(health.status).toBe('degraded');
    expect(health.content).toMatchObject({ store: 'file', items: 10 });
    expect(health.content.compaction).toMatchObject({
      status: 'failing',
      last_error: 'EISDIR',
      last_failure_at: new Date(t.clock.now()).toISOString(),
    });
    const failures = health.content.compaction.failures as number;
    expect(failures).toBeGreaterThanOrEqual(1);
    // The first retry a second after the failure, doubling per failure (the test app's clock stands still).
    expect(Date.parse(health.content.compaction.next_retry_at) - t.clock.now()).toBe(1000 * 2 ** (failures - 1));
    // The record holds an error code, never a path.
    expect(JSON.stringify(health)).not.toContain(dataDir);
    const metrics = (await request(t.app).get('/api/metrics/prometheus')).text;
    expect(metrics).toContain(`# TYPE ${METRICS.contentCompactionFailuresTotal} counter`);
    expect(counterValue(metrics, METRICS.contentCompactionFailuresTotal)).toBeGreaterThanOrEqual(failures);

    // Restart while failing (the fault cleared meanwhile, as an operator freeing the disk would):
    // the files the failed compactions left load every acknowledged write.
    await apps.pop()!.close();
    rmSync(fault, { recursive: true });
    const again = await start();
    expect(await served(again)).toBe(10);
    expect((await request(again.app).get('/health')).body).toMatchObject({
      status: 'ok',
      content: { items: 10, compaction: { status: 'ok', failures: 0 } },
    });
  });

  it('retries on its own; once the fault is gone the compaction succeeds, /health is ok again, the count stays', async () => {
    const t = await start();
    mkdirSync(fault);
    expect(await ingestTen(t)).toEqual(Array(10).fill(201));
    const compaction = async () =>
      (await request(t.app).get('/health')).body.content.compaction as { status: string; failures: number };
    // The first retry (after 1 s) fails too: still failing, counted again.
    await until('a failed retry', async () => (await compaction()).failures >= 2);
    rmSync(fault, { recursive: true });
    // The next retry (2 s after the second failure) succeeds.
    await until('a successful retry', async () => (await compaction()).status === 'ok');
    const health = (await request(t.app).get('/health')).body;
    expect(health.status).toBe('ok');
    expect(health.content.compaction).toMatchObject({ status: 'ok', last_error: 'EISDIR', next_retry_at: null });
    const failures = health.content.compaction.failures as number;
    expect(failures).toBeGreaterThanOrEqual(2);
    expect(
      counterValue((await request(t.app).get('/api/metrics/prometheus')).text, METRICS.contentCompactionFailuresTotal),
    ).toBe(failures);
    expect(
      readdirSync(dataDir)
        .filter((f) => f.startsWith('content-'))
        .sort(),
    ).toEqual(['content-1.log', 'content-1.snapshot']);
    expect(await served(t)).toBe(10);
  }, 30_000);
});
