import { ApiError, createClient, type ChatAnswer, type Item, type SearchResponse } from 'svc-ai-search-backend/client';

/**
 * A service calling the deployed backend over HTTP with the package's typed client: it stores a
 * note, finds it and asks about it. Every call's parameters and answer are checked by the compiler
 * against the route schemas the OpenAPI document is generated from.
 *
 *   API_TOKEN=... node build/search.js http://localhost:8080
 */
export async function tour(
  baseUrl: string,
  token: string | undefined,
): Promise<{ stored: Item; found: SearchResponse; answer: ChatAnswer }> {
  const api = createClient({ baseUrl, token });
  const stored = await api.ingest({
    type: 'article',
    title: 'Platform notes',
    body: 'Two search stacks, blue and green, in one namespace.',
    tags: ['platform'],
  });
  const found = await api.search({ q: 'blue green stacks', type: 'article', limit: 5 });
  const answer = await api.chat({ message: 'Which stacks do the platform notes name?' });
  return { stored, found, answer };
}

if (require.main === module) {
  tour(process.argv[2] ?? 'http://localhost:8080', process.env.API_TOKEN).then(
    ({ stored, found, answer }) => {
      process.stdout.write(
        `${JSON.stringify({ stored: stored.id, results: found.results.map((r) => r.id), sources: answer.sources.map((s) => s.id) })}\n`,
      );
    },
    (e: unknown) => {
      // A refusal names its status, code and field.
      process.stderr.write(
        e instanceof ApiError
          ? `${e.status} ${e.body.error}${e.body.field ? ` (${e.body.field})` : ''}: ${e.body.message}\n`
          : `${String(e)}\n`,
      );
      process.exit(1);
    },
  );
}
