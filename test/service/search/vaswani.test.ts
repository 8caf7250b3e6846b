import { existsSync } from 'node:fs';
import request from 'supertest';
import {
  loadVaswani,
  parseDocs,
  parseQrels,
  parseQueries,
  splitTitle,
  vaswaniDir,
} from '../../../tools/corpus/vaswani';
import { buildTestApp, type TestApp } from '../../helpers/app';

describe('Vaswani loader', () => {
  it('parses TREC documents, topics and qrels', () => {
    expect(parseDocs('<DOC>\n<DOCNO>7</DOCNO>\nlaser beams  a study of\ncoherent light\n</DOC>')).toEqual([
      { id: 'doc-7', type: 'article', title: 'laser beams', body: 'a study of coherent light' },
    ]);
    expect(parseQueries('<top>\n<num>3</num><title>\nUSE OF LASERS\n</title>\n</top>')).toEqual([
      { qid: '3', text: 'use of lasers' },
    ]);
    expect(parseQrels('3 0 7 1\n3 0 9 1\n')).toEqual(
      new Map([
        [
          '3',
          new Map([
            ['doc-7', 1],
            ['doc-9', 1],
          ]),
        ],
      ]),
    );
  });

  it('takes the first line as the title when there is no double space', () => {
    expect(splitTitle('waveguide theory\nmodes in guides')).toEqual({
      title: 'waveguide theory',
      body: 'modes in guides',
    });
  });
});

const available = existsSync(`${vaswaniDir()}/doc-text.trec`);

(available ? describe : describe.skip)('Vaswani subset through the HTTP API', () => {
  let t: TestApp;
  const v = available ? loadVaswani() : undefined;
  // Ten queries and a pool: their judged documents plus 1,500 others.
  const queries = v ? v.queries.slice(0, 10) : [];
  beforeAll(async () => {
    t = await buildTestApp({ service: { environment: 'testing' }, rateLimit: { enabled: false } });
    const judged = new Set(queries.flatMap((q) => [...(v!.qrels.get(q.qid)?.keys() ?? [])]));
    const pool = v!.items.filter((i, n) => judged.has(i.id) || n % 7 === 0).slice(0, 3000);
    for (let i = 0; i < pool.length; i += 1000) {
      const res = await request(t.app)
        .post('/api/ingest-batch')
        .send({ items: pool.slice(i, i + 1000) });
      expect(res.status).toBe(201);
    }
  });
  afterAll(() => t.close());

  it('ranks judged documents well: /api/eval over ten queries at k = 10', async () => {
    const res = await request(t.app)
      .post('/api/eval')
      .send({ k: 10, queries: queries.map((q) => ({ query: q.text, relevant: [...v!.qrels.get(q.qid)!.keys()] })) });
    expect(res.status).toBe(200);
    expect(res.body.per_query).toHaveLength(10);
    // A sanity floor far under what the full run reports (BENCHMARKS.md), not a tuning target.
    expect(res.body.metrics.ndcg).toBeGreaterThan(0.3);
    expect(res.body.metrics.recall).toBeGreaterThan(0.2);
  });
});
