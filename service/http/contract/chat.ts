import { z } from 'zod';
import { itemTypeSchema } from './item';
import { searchParams } from './search';

/** Longest question, characters. */
export const MAX_MESSAGE_CHARS = 4000;
/** Most earlier turns sent along. */
export const MAX_HISTORY = 20;

/** `POST /api/chat` `{message, history?, type?, tag?, date_from?, date_to?}`: the filters are search's, for the retrieval. */
export const chatRequest = z
  .object({
    message: z
      .string({ error: 'message is required: the question, as a string' })
      .trim()
      .min(1, { error: 'message must not be empty' })
      .max(MAX_MESSAGE_CHARS, { error: `message is longer than ${MAX_MESSAGE_CHARS} characters` }),
    history: z
      .array(
        z.object({
          role: z.enum(['user', 'assistant'], { error: 'history roles must be user or assistant' }),
          content: z
            .string({ error: 'history content must be a string' })
            .max(8000, { error: 'a history message is longer than 8000 characters' }),
        }),
        { error: 'history must be an array of {role, content}' },
      )
      .max(MAX_HISTORY, { error: `history holds more than ${MAX_HISTORY} messages` })
      .optional(),
    ...searchParams.pick({ type: true, tag: true, date_from: true, date_to: true }).shape,
  })
  .meta({ id: 'ChatRequest', example: { message: 'How does the service limit request rates?' } });
export type ChatRequest = z.input<typeof chatRequest>;

/** A source an answer may cite as `[n]`. */
export const chatSourceSchema = z
  .object({ id: z.string(), type: itemTypeSchema, title: z.string(), url: z.string().nullable() })
  .meta({ id: 'ChatSource' });

/** Token counts, OpenAI's field names. */
export const usageSchema = z
  .object({ prompt_tokens: z.int().min(0), completion_tokens: z.int().min(0), total_tokens: z.int().min(0) })
  .meta({ id: 'Usage' });

/** The whole answer (without `Accept: text/event-stream`). */
export const chatAnswerSchema = z
  .object({ answer: z.string(), sources: z.array(chatSourceSchema), usage: usageSchema, model: z.string() })
  .meta({
    id: 'ChatAnswer',
    example: {
      answer: 'Every request is charged to a global, a per-IP and a per-endpoint tier [1].',
      sources: [{ id: 'rate-limiting', type: 'article', title: 'Rate limiting', url: null }],
      usage: { prompt_tokens: 412, completion_tokens: 18, total_tokens: 430 },
      model: 'extractive',
    },
  });

/**
 * The SSE events of a streamed answer, in order: one `sources`, `delta`…, one `usage`, then
 * `done`, or `error` if the answer breaks off after it started.
 */
export const chatEvents = {
  sources: z.object({ sources: z.array(chatSourceSchema) }).meta({ id: 'ChatEventSources' }),
  delta: z.object({ text: z.string() }).meta({ id: 'ChatEventDelta' }),
  usage: z.object({ usage: usageSchema, model: z.string() }).meta({ id: 'ChatEventUsage' }),
  done: z.object({}).meta({ id: 'ChatEventDone' }),
  error: z
    .object({
      error: z.string(),
      message: z.string(),
      status: z.int(),
      /** The setting whose limit ended the answer, when that is why it ended. */
      limit: z
        .enum(['AI_ANSWER_MAX_CHARS', 'AI_ANSWER_TIMEOUT_MS', 'AI_FIRST_BYTE_TIMEOUT_MS', 'AI_EVENT_MAX_BYTES'])
        .optional(),
    })
    .meta({ id: 'ChatEventError' }),
} as const;
