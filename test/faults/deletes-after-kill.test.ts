import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceProcess } from '../../tools/harness/service-process';

/**
 * Issue 39 on the real service process with a `DATA_DIR`: 300 items written, the process stopped
 * gracefully (so the persisted search segment and the content catalogue hold all 300), then 60
 * deleted by id in two requests, 40 patched and a tag's 60 items deleted by `delete_where`, then
 * kill -9 and restart, twice (the second start reads the catalogue the first wrote). Every
 * deleted id is 404, found by no search (its own word), in no listing and no export; every patched
 * item shows its new title; every survivor is served. Compaction runs meanwhile (a small
 * CONTENT_COMPACTION_BYTES), so deletes meet snapshots and catalogues too.
 */
const N = 300;
/** A word only item `k` holds: letters only, so the analyzer keeps it one term. */
const word = (k: number) =>
  `zq${String.fromCharCode(97 + (k % 26))}${String.fromCharCode(97 + (Math.floor(k / 26) % 26))}vex`;
const id = (k: number) => `item-${k}`;

describe('deletes and patches survive kill -9 and restart (DATA_DIR)', () => {
  let dataDir: string;
  let svc: ServiceProcess | undefined;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'deletes-kill-'));
  });
  afterAll(async () => {
    await svc?.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    'acknowledged gone is gone after every restart; patched and surviving items are served',
    async () => {
      svc = await ServiceProcess.start({
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          ENVIRONMENT: 'testing',
          LOG_LEVEL: 'warn',
          DATA_DIR: dataDir,
          DEMO_CONTENT: 'false',
          RATELIMIT_ENABLED: 'false',
          CONTENT_COMPACTION_BYTES: String(64 << 10),
        },
      });
      const s = svc;
      const post = async (body: unknown) => {
        const res = await s.request('/api/ingest-batch', { method: 'POST', body });
        expect(res.status).toBeLessThan(300);
        return res.json<{ operations?: { deleted: string[]; delete_where?: { count: number } } }>();
      };
      for (let b = 0; b < N; b += 100) {
        await post({
          items: Array.from({ length: 100 }, (_, j) => {
            const k = b + j;
            return {
              id: id(k),
              type: 'article',
              title: `Item ${k}`,
              body: `Some text about ${word(k)} and the rest. ${'filler '.repeat(40)}`,
              tags: k >= 240 ? ['retired'] : ['live'],
            };
          }),
        });
      }
      // A graceful stop persists the search segment and the catalogue with all 300 items.
      await s.stop();
      await s.restart();

      const deleted = new Set<number>();
      const first = await post({ delete: Array.from({ length: 30 }, (_, k) => id(k)) });
      expect(first.operations?.deleted).toHaveLength(30);
      const second = await post({ delete: [...Array.from({ length: 30 }, (_, k) => id(30 + k)), 'never-was'] });
      expect(second.operations?.deleted).toHaveLength(30);
      for (let k = 0; k < 60; k++) deleted.add(k);
      await post({ patch: Array.from({ length: 40 }, (_, k) => ({ id: id(100 + k), title: `Patched ${100 + k}` })) });
      const where = await post({ delete_where: { tag: 'retired' } });
      expect(where.operations?.delete_where?.count).toBe(60);
      for (let k = 240; k < N; k++) deleted.add(k);

      for (const round of [1, 2]) {
        await s.process.stop('SIGKILL');
        await s.restart();
        const problems: string[] = [];
        for (let k = 0; k < N; k++) {
          const got = await s.request(`/api/v1/articles/${id(k)}`);
          // Every hit of its word (fuzzy matching finds the other items' words too: one letter apart).
          const found = await s.request(`/api/search?q=${word(k)}&limit=100`);
          const hits = found.json<{ total: number; results: Array<{ id: string }> }>();
          if (deleted.has(k)) {
            if (got.status !== 404) problems.push(`${id(k)} deleted but GET ${got.status}`);
            if (hits.results.some((r) => deleted.has(Number(r.id.slice(5)))))
              problems.push(`${id(k)}'s word finds a deleted item`);
            if (hits.total > N - deleted.size)
              problems.push(`${id(k)}'s word: total ${hits.total} counts deleted items`);
          } else {
            if (got.status !== 200) problems.push(`${id(k)} survived but GET ${got.status}`);
            else if (k >= 100 && k < 140 && got.json<{ title: string }>().title !== `Patched ${k}`)
              problems.push(`${id(k)} lost its patch`);
            if (hits.results[0]?.id !== id(k)) problems.push(`${id(k)} survived but not found by search`);
          }
        }
        const exported = (await s.request('/api/export/all.ndjson')).text
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { id: string }).id);
        expect({ round, exported: exported.length }).toEqual({ round, exported: N - deleted.size });
        for (const k of deleted) if (exported.includes(id(k))) problems.push(`${id(k)} deleted but exported`);
        const listed = (await s.request('/api/v1/articles?limit=100')).json<{ total: number }>();
        expect({ round, listed: listed.total }).toEqual({ round, listed: N - deleted.size });
        const retired = (await s.request('/api/v1/articles?tag=retired')).json<{ total: number }>();
        expect({ round, retired: retired.total }).toEqual({ round, retired: 0 });
        const health = (await s.request('/health')).json<{ content: { items: number } }>();
        expect({ round, items: health.content.items }).toEqual({ round, items: N - deleted.size });
        expect({ round, problems }).toEqual({ round, problems: [] });
      }
    },
    // A hang guard, not a bound on speed: three starts of the service and ~1,300 requests.
    300_000,
  );
});
