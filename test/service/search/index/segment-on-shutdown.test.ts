import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceProcess } from '../../../../tools/harness/service-process';

/**
 * Issue 37, "a graceful stop leaves an intact segment": the real service process on a DATA_DIR
 * (a plain temporary folder: the disk is not what is tested), a bulk ingest, SIGTERM at once
 * (far inside the index's 30 s idle checkpoint), a restart. The restart must load the index from
 * the persisted segment with nothing to re-index, and every item must be found. What is asserted
 * is the restore path the service logs, never a time: the two figures the restart reports are
 * counts of documents.
 */

const TOKEN = 'segment-shutdown-token';
// Enough to leave an appended segment behind the last merge (merges start at 1,024 appended
// documents and an eighth of the live ones: 2,500 leaves about 450 unmerged), small for CI.
const ITEMS = 2500;
const GROUP = 50;
const BATCH = 500;

/** A word of ten letters per group, from a fixed generator: no two groups' words are within a fuzzy match of each other in practice. */
function groupWord(g: number): string {
  let x = (g + 1) * 2654435761;
  let s = '';
  for (let i = 0; i < 10; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += String.fromCharCode(97 + (x % 26));
  }
  return s;
}

const items = Array.from({ length: ITEMS }, (_, i) => ({
  id: `note-${i}`,
  type: 'article',
  title: `Note ${i}`,
  body: `hummingbirds hover over the ${groupWord(Math.floor(i / GROUP))} garden, note ${i}.`,
}));

interface LogLine {
  readonly msg?: string;
  readonly [field: string]: unknown;
}

function logLines(svc: ServiceProcess): LogLine[] {
  return svc.process
    .logs()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

describe('a graceful stop leaves an intact segment (issue 37)', () => {
  let dataDir: string;
  const env = () => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ENVIRONMENT: 'production',
    LOG_LEVEL: 'info',
    API_TOKEN: TOKEN,
    RATELIMIT_ENABLED: 'false',
    DATA_DIR: dataDir,
  });

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-segment-stop-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('SIGTERM right after a bulk ingest persists what was appended; the restart restores it and re-indexes nothing', async () => {
    const first = await ServiceProcess.start({ env: env() });
    try {
      for (let i = 0; i < ITEMS; i += BATCH) {
        const res = await first.request('/api/ingest-batch', {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}` },
          body: { items: items.slice(i, i + BATCH) },
        });
        expect(res.status).toBe(201);
      }
    } finally {
      // At once: the idle checkpoint (30 s without writes) never comes.
      await first.stop();
    }
    expect(first.process.exitStatus).toBe('exit 0');

    const second = await ServiceProcess.start({ env: env() });
    try {
      // The log reaches this process through a pipe and the readiness answer through a socket:
      // either may be read first, so the start's last line is awaited (a hang guard's timeout).
      await second.logged((l) => l.startsWith('{') && (JSON.parse(l) as LogLine).msg === 'content loaded and indexed', {
        what: 'the "content loaded and indexed" line',
      });
      const lines = logLines(second);
      // The restore path: the segment's documents are the content's, none changed, none re-indexed.
      expect(
        lines.find((l) => String(l.msg).startsWith('search index loaded from the persisted segment')),
      ).toMatchObject({ documents: ITEMS, changed: 0, removed: 0 });
      expect(lines.find((l) => l.msg === 'content loaded and indexed')).toMatchObject({
        items: ITEMS,
        index: { from: 'segment', documents: ITEMS, reindexed: 0 },
      });
      expect(
        lines.some(
          (l) =>
            String(l.msg).includes('building the index from the content') ||
            String(l.msg).includes('rebuilding the index'),
        ),
      ).toBe(false);

      // Every item is found: all of them by a word they share, and each by its group's word.
      const all = await second.request('/api/search?q=hummingbirds&limit=1');
      expect(all.json<{ total: number }>().total).toBe(ITEMS);
      for (let g = 0; g < ITEMS / GROUP; g++) {
        const res = await second.request(`/api/search?q=${groupWord(g)}&limit=100`);
        expect(res.status).toBe(200);
        const found = new Set(res.json<{ results: Array<{ id: string }> }>().results.map((r) => r.id));
        const missing = items.slice(g * GROUP, (g + 1) * GROUP).filter((it) => !found.has(it.id));
        expect(missing.map((it) => it.id)).toEqual([]);
      }
    } finally {
      await second.stop();
    }
    // The stop said what it did (`stop` returns once the output has been read to its end).
    const persisted = logLines(first).find((l) => l.msg === 'search segment persisted before exit');
    expect(persisted).toMatchObject({ documents: ITEMS });
    // There was an appended part to persist (about 450 documents after the merges at 1,024 and 2,048).
    expect(persisted?.appended).toBeGreaterThan(0);
  }, 120_000); // a hang guard only (two starts of the service, 2,500 items, 51 searches); nothing asserts a time
});
