/** Chat: providers (extractive, OpenAI-compatible), prompts, token counting, SSE. */
export * from './types';
export * from './tokens';
export * from './prompt';
export * from './passages';
export * from './sse';
export * from './extractive';
export * from './openai';
export * from './chat-service';
