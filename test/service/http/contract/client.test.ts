import type { Server } from 'node:http';
import { ApiError, createClient, type SearchClient } from '../../../../service/http/contract/client';
import { buildTestApp, type TestApp } from '../../../helpers/app';

describe('the typed client against a listening service', () => {
  let t: TestApp;
  let server: Server;
  let api: SearchClient;
  beforeAll(async () => {
    t = await buildTestApp({ service: { apiToken: 'client-test-token-0123456789' }, rateLimit: { enabled: false } });
    server = t.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as { port: number }).port;
    api = createClient({ baseUrl: `http://127.0.0.1:${port}`, token: 'client-test-token-0123456789' });
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.close();
  });

  it('ingests, searches, lists, reads and chats with typed parameters and answers', async () => {
    const item = await api.ingest({
      type: 'article',
      title: 'Typed clients',
      body: 'Generated from the schemas, checked by the compiler.',
      tags: ['api'],
    });
    expect(item.id).toBe('typed-clients');
    const batch = await api.ingestBatch([
      { type: 'project', title: 'Schema first', body: 'One definition of each request.' },
    ]);
    expect(batch.stored).toBe(1);
    const found = await api.search({ q: 'schemas compiler', limit: 5, mode: 'keyword' });
    expect(found.results[0].id).toBe('typed-clients');
    expect(found.mode).toBe('keyword');
    const posted = await api.searchBody({ q: 'schemas compiler', type: ['article'], semantic_ratio: 0.5 });
    expect(posted.results.map((r) => r.id)).toEqual(['typed-clients']);
    expect((await api.list('projects', { limit: 10 })).items.map((i) => i.id)).toEqual(['schema-first']);
    expect((await api.item('articles', 'typed-clients')).body).toContain('compiler');
    const answer = await api.chat({ message: 'What checks the typed client?' });
    expect(answer.sources.map((s) => s.id)).toContain('typed-clients');
  });

  it('streams a chat answer as typed events, and resolves a batch none of whose items was stored with the results', async () => {
    const events: string[] = [];
    let text = '';
    for await (const e of api.chatStream({ message: 'What checks the typed client?' })) {
      events.push(e.event);
      if (e.event === 'delta') text += e.data.text;
      if (e.event === 'sources') expect(e.data.sources.map((s) => s.id)).toContain('typed-clients');
    }
    expect(events[0]).toBe('sources');
    expect(events.slice(-2)).toEqual(['usage', 'done']);
    expect(text.length).toBeGreaterThan(0);
    const refused = await api.ingestBatch([{ type: 'article', title: '' }] as never);
    expect({ stored: refused.stored, failed: refused.failed, status: refused.results[0].status }).toEqual({
      stored: 0,
      failed: 1,
      status: 'invalid',
    });
  });

  it('rejects refusals with ApiError carrying the status and the named field', async () => {
    const err = await api.search({ q: 'x', limit: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).body.field).toBe('limit');
    await expect(api.item('articles', 'no-such-item')).rejects.toMatchObject({ status: 404 });
  });

  it('checks parameters at compile time', () => {
    const compileOnly = (): unknown => [
      // @ts-expect-error sort is one of the sorts
      api.search({ q: 'x', sort: 'sideways' }),
      // @ts-expect-error type is one of the item types
      api.search({ q: 'x', type: 'podcast' }),
      // @ts-expect-error mode is keyword, semantic or hybrid
      api.search({ q: 'x', mode: 'meaning' }),
      // @ts-expect-error a query vector is numbers
      api.searchBody({ vector: ['x'] }),
      // @ts-expect-error an item needs a title
      api.ingest({ type: 'article', body: '' }),
      // @ts-expect-error history roles are user or assistant
      api.chat({ message: 'x', history: [{ role: 'system', content: 'x' }] }),
    ];
    expect(typeof compileOnly).toBe('function');
  });
});
