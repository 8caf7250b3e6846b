import { int, num, oneOf, str, url } from '../parsers';
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
  /** Per-attempt timeout, milliseconds. @default 30000 */
  readonly timeoutMs: number;
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
  variable('AI_MAX_RETRIES', 'ai.maxRetries', int({ min: 0, max: 10 }), 'Retries after a failed provider call'),
  variable('AI_MAX_TOKENS', 'ai.maxTokens', int({ min: 1, max: 100000 }), 'Most completion tokens per answer'),
  variable('AI_TEMPERATURE', 'ai.temperature', num({ min: 0, max: 2 }), 'Sampling temperature'),
  variable('CHAT_CONTEXT_DOCUMENTS', 'ai.contextDocuments', int({ min: 1, max: 50 }), 'Passages retrieved per chat answer'),
];
