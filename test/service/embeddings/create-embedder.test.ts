import { loadSettings } from '../../../configs';
import { createEmbedder, OpenAiEmbedder } from '../../../service/embeddings';
import { silentLogger } from '../../../service/lib/logger';
import { FakeOpenAi } from '../../../tools/harness/fake-openai';

describe('createEmbedder', () => {
  const deps = { tokens: { addTokens: () => undefined }, logger: silentLogger() };

  it('makes none with EMBEDDINGS_PROVIDER=none (the default)', () => {
    expect(createEmbedder(loadSettings({}), deps)).toBeUndefined();
  });

  it('makes an OpenAiEmbedder on the chat provider’s URL and key when the embedder has none of its own', async () => {
    const fake = await FakeOpenAi.start();
    try {
      const settings = loadSettings({
        EMBEDDINGS_PROVIDER: 'openai',
        AI_BASE_URL: fake.url,
        AI_API_KEY: 'sk-chat-key',
        EMBEDDINGS_MODEL: 'embed-x',
        EMBEDDINGS_DIMENSIONS: '16',
        EMBEDDINGS_SEND_DIMENSIONS: 'true',
      });
      const embedder = createEmbedder(settings, deps);
      expect(embedder).toBeInstanceOf(OpenAiEmbedder);
      expect(embedder).toMatchObject({ model: 'embed-x', dimensions: 16 });
      const out = await embedder!.embed(['a car']);
      expect(out.vectors[0]).toHaveLength(16);
      expect(fake.requests[0].headers.authorization).toBe('Bearer sk-chat-key');
      expect(fake.requests[0].body).toMatchObject({ model: 'embed-x', dimensions: 16 });
    } finally {
      await fake.close();
    }
  });
});
