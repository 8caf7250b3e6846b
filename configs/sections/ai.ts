import type { SettingsIssue } from '../errors';
import { int, num, oneOf, size, str, url } from '../parsers';
import { variable, type VariableSpec } from '../variables';

/** Which chat provider answers questions. */
export type AiProviderName = 'extractive' | 'openai';

/** Chat / AI model provider. */
export interface AiSettings {
  /** `extractive` composes cited answers from retrieved passages (no network); `openai` calls an OpenAI-compatible API. @default 'extractive' */
  readonly provider: AiProviderName;
  /** Base URL of the OpenAI-compatible API (…/v1). @default 'https://api.openai.com/v1' */
  readonly baseUrl: string;
  /** API key for the provider. Secret. @default undefined */
  readonly apiKey?: string;
  /** Model name sent to the provider. @default 'gpt-4o-mini' */
  readonly model: string;
  /** Per-attempt timeout, milliseconds: until the whole answer (JSON) or between two events (streaming). @default 30000 */
  readonly timeoutMs: number;
  /**
   * Longest wait for a streamed answer's first event, retries included, milliseconds: the
   * client's headers wait for it; past it the chat answers 504. The wait is within
   * `answerTimeoutMs` too (the lower of the two ends it). @default 30000
   */
  readonly firstByteTimeoutMs: number;
  /**
   * Longest time of one answer, milliseconds, from the call to the provider to its end (retries,
   * the provider's pauses and a slow client's backpressure included; chunks arriving do not
   * extend it). Past it a stream ends with an `error` event, a JSON chat with 504. @default 120000
   */
  readonly answerTimeoutMs: number;
  /**
   * Longest answer, characters: a provider that does not stop at `maxTokens` is cut there (a
   * stream ends with an `error` event after the text up to the limit, a JSON chat answers 502).
   * Memory does not grow with it. @default 65536 (~16k tokens of English)
   */
  readonly answerMaxChars: number;
  /**
   * Most bytes of one event of a provider's stream, or of a whole JSON answer; past it the answer
   * ends as a provider error instead of being buffered on. @default 1048576 (1 MiB)
   */
  readonly eventMaxBytes: number;
  /** Retries after a failed attempt (429, 5xx, network), with exponential backoff. @default 2 */
  readonly maxRetries: number;
  /** Most completion tokens asked for. @default 512 */
  readonly maxTokens: number;
  /** Sampling temperature. @default 0.2 */
  readonly temperature: number;
  /** Passages retrieved as context for one answer. @default 5 */
  readonly contextDocuments: number;
}

export const DEFAULT_AI: AiSettings = {
  provider: 'extractive',
  baseUrl: 'https://api.openai.com/v1',
  apiKey: undefined,
  model: 'gpt-4o-mini',
  timeoutMs: 30000,
  firstByteTimeoutMs: 30000,
  answerTimeoutMs: 120000,
  answerMaxChars: 65536,
  eventMaxBytes: 1024 * 1024,
  maxRetries: 2,
  maxTokens: 512,
  temperature: 0.2,
  contextDocuments: 5,
};

export const AI_VARIABLES: readonly VariableSpec[] = [
  variable('AI_PROVIDER', 'ai.provider', oneOf<AiProviderName>(['extractive', 'openai']), 'Chat provider'),
  variable('AI_BASE_URL', 'ai.baseUrl', url(['http', 'https']), 'OpenAI-compatible API base URL'),
  variable('AI_API_KEY', 'ai.apiKey', str(), 'API key of the AI provider', { secret: true }),
  variable('AI_MODEL', 'ai.model', str(), 'Model name'),
  variable('AI_TIMEOUT_MS', 'ai.timeoutMs', int({ min: 100, max: 600000 }), 'Per-attempt provider timeout, ms'),
  variable(
    'AI_FIRST_BYTE_TIMEOUT_MS',
    'ai.firstByteTimeoutMs',
    int({ min: 100, max: 600000 }),
    "Longest wait for a streamed answer's first event (retries included), ms; then 504",
  ),
  variable(
    'AI_ANSWER_TIMEOUT_MS',
    'ai.answerTimeoutMs',
    int({ min: 100, max: 3600000 }),
    'Longest time of one answer, streamed or not, ms; then an error event or 504',
  ),
  variable(
    'AI_ANSWER_MAX_CHARS',
    'ai.answerMaxChars',
    int({ min: 1, max: 1000000000 }),
    'Longest answer, characters; a provider ignoring max tokens is cut there',
  ),
  variable(
    'AI_EVENT_MAX_BYTES',
    'ai.eventMaxBytes',
    size({ min: 1024, max: 64 * 1024 * 1024 }),
    "Largest event of a provider's stream, or whole JSON answer",
  ),
  variable('AI_MAX_RETRIES', 'ai.maxRetries', int({ min: 0, max: 10 }), 'Retries after a failed provider call'),
  variable('AI_MAX_TOKENS', 'ai.maxTokens', int({ min: 1, max: 100000 }), 'Most completion tokens per answer'),
  variable('AI_TEMPERATURE', 'ai.temperature', num({ min: 0, max: 2 }), 'Sampling temperature'),
  variable(
    'CHAT_CONTEXT_DOCUMENTS',
    'ai.contextDocuments',
    int({ min: 1, max: 50 }),
    'Passages retrieved per chat answer',
  ),
];

/** Rules between the AI settings. */
export function aiIssues(ai: AiSettings): SettingsIssue[] {
  const issues: SettingsIssue[] = [];
  // A token is at least one character: a lower limit would cut answers the model was allowed to give.
  if (ai.answerMaxChars < ai.maxTokens) {
    issues.push({
      code: 'ERR_SETTINGS_CONFLICT',
      variable: 'AI_ANSWER_MAX_CHARS',
      value: String(ai.answerMaxChars),
      message: `AI_ANSWER_MAX_CHARS=${ai.answerMaxChars} is below AI_MAX_TOKENS=${ai.maxTokens}; accepted: at least AI_MAX_TOKENS characters (a token is one or more), e.g. 4 × AI_MAX_TOKENS`,
    });
  }
  return issues;
}
