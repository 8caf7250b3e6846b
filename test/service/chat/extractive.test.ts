import { ExtractiveProvider, NO_ANSWER } from '../../../service/chat/extractive';
import { parseSse, formatSse } from '../../../service/chat/sse';
import { countedUsage, textTokens } from '../../../service/chat/tokens';
import type { CompletionChunk, CompletionRequest } from '../../../service/chat/types';

const passages = [
  {
    id: 'k8s',
    title: 'Kubernetes at home',
    text: 'Three mini PCs make a cluster. Storage is where clusters hurt. Upgrades drain nodes.',
  },
  { id: 'nas', title: 'A home NAS', text: 'ZFS keeps the storage honest with checksums. Snapshots run hourly.' },
];
const req = (question: string, ps = passages): CompletionRequest => ({
  messages: [{ role: 'user', content: question }],
  question,
  passages: ps,
  maxTokens: 100,
  temperature: 0,
});

describe('ExtractiveProvider', () => {
  const p = new ExtractiveProvider();

  it('quotes the best-matching sentence of each source with its citation', async () => {
    const done = await p.complete(req('how is storage handled?'));
    expect(done.model).toBe('extractive');
    expect(done.text).toBe(
      "From the site's content:\n\n- Storage is where clusters hurt. [1]\n- ZFS keeps the storage honest with checksums. [2]",
    );
    expect(done.usage).toEqual(
      countedUsage(
        req('').messages.map(() => ({ role: 'user' as const, content: 'how is storage handled?' })),
        done.text,
      ),
    );
  });

  it('says the content does not cover it when nothing was retrieved', async () => {
    expect((await p.complete(req('anything', []))).text).toBe(NO_ANSWER);
  });

  it('streams the same text as deltas, then done with usage', async () => {
    const chunks: CompletionChunk[] = [];
    for await (const c of p.stream(req('snapshots'))) chunks.push(c);
    const text = chunks
      .filter((c): c is Extract<CompletionChunk, { kind: 'delta' }> => c.kind === 'delta')
      .map((c) => c.text)
      .join('');
    expect(text).toBe((await p.complete(req('snapshots'))).text);
    expect(chunks.at(-1)).toMatchObject({ kind: 'done', model: 'extractive' });
  });
});

describe('token counting', () => {
  it('counts with the o200k tokenizer and frames chat messages', () => {
    expect(textTokens('')).toBe(0);
    expect(textTokens('hello world')).toBe(2);
    const u = countedUsage([{ role: 'user', content: 'hello world' }], 'hi');
    expect(u).toEqual({ prompt_tokens: 3 + 4 + 2, completion_tokens: 1, total_tokens: 10 });
  });
});

describe('SSE', () => {
  async function* bytes(...parts: string[]): AsyncGenerator<Uint8Array> {
    for (const s of parts) yield new TextEncoder().encode(s);
  }
  it('parses events split anywhere, with CRLF, comments and multi-line data', async () => {
    const out = [];
    for await (const e of parseSse(
      bytes('data: {"a"', ':1}\r\n\r', '\n: comment\nevent: x\ndata: l1\ndata: l2\n\ndata: [DONE]\n\n'),
    ))
      out.push(e);
    expect(out).toEqual([
      { event: 'message', data: '{"a":1}' },
      { event: 'x', data: 'l1\nl2' },
      { event: 'message', data: '[DONE]' },
    ]);
  });
  it('formats our events', () => {
    expect(formatSse('delta', { text: 'hi' })).toBe('event: delta\ndata: {"text":"hi"}\n\n');
  });
});
