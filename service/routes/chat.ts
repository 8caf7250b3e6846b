import { Router, type Request, type Response } from 'express';
import type { ChatInput } from '../chat/chat-service';
import { formatSse } from '../chat/sse';
import { ProviderError } from '../chat/types';
import { chatRequest } from '../http/contract/chat';
import { validate } from '../http/contract/validate';
import { HttpError } from '../http/errors';
import { jsonBody } from '../http/json-body';
import { jsonObject } from '../http/json-object';
import type { FeatureContext } from './context';

export { MAX_HISTORY, MAX_MESSAGE_CHARS } from '../http/contract/chat';
/**
 * Largest chat body, bytes (capped by `MAX_BODY_SIZE`): a question and `MAX_HISTORY` turns of
 * 8,000 characters, with room for JSON escapes.
 */
export const CHAT_BODY_BYTES = 1024 * 1024;

function parseChat(req: Request): ChatInput {
  const r = validate(chatRequest, jsonObject(req, '{"message": "What have you written about Kubernetes?"}'));
  return { message: r.message, history: r.history ?? [] };
}

/** 502/504 for provider failures. */
function providerHttpError(e: ProviderError): HttpError {
  return e.kind === 'timeout'
    ? new HttpError(504, 'upstream_timeout', e.message)
    : new HttpError(502, 'upstream_error', e.message, e.upstreamStatus ? { upstream_status: e.upstreamStatus } : undefined);
}

/** An AbortSignal that fires when the client goes away before the response is done. */
function clientGone(res: Response): AbortSignal {
  const ctrl = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) ctrl.abort(new Error('client went away'));
  });
  return ctrl.signal;
}

/**
 * `POST /api/chat` and `POST /api/v1/chat` `{message, history?}` → `{answer, sources, usage,
 * model}`; with `Accept: text/event-stream` the answer streams as SSE: `sources`, `delta`…,
 * `usage`, `done` (or `error` if the provider breaks off mid-answer).
 *
 * Routes are added to `r` (createFeatures passes one router for every group, so a request walks one).
 */
export function chatRouter(ctx: FeatureContext, r: Router = Router()): Router {
  const handle = async (req: Request, res: Response) => {
    const input = parseChat(req);
    const signal = clientGone(res);
    const wantsStream = (req.get('accept') ?? '').includes('text/event-stream');
    if (!wantsStream) {
      try {
        res.json(await ctx.chat.answer(input, signal));
      } catch (e) {
        throw e instanceof ProviderError ? providerHttpError(e) : e;
      }
      return;
    }
    let stream;
    try {
      stream = await ctx.chat.stream(input, signal);
    } catch (e) {
      throw e instanceof ProviderError ? providerHttpError(e) : e;
    }
    res.status(200);
    res.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
    res.write(formatSse('sources', { sources: stream.sources }));
    try {
      for await (const chunk of stream.chunks) {
        if (chunk.kind === 'delta') res.write(formatSse('delta', { text: chunk.text }));
        else res.write(formatSse('usage', { usage: chunk.usage, model: chunk.model }));
      }
      res.write(formatSse('done', {}));
    } catch (e) {
      if (!signal.aborted) {
        const err = e instanceof ProviderError ? providerHttpError(e) : new HttpError(500, 'internal_error', 'the answer broke off');
        if (!(e instanceof ProviderError)) ctx.deps.logger.error({ err: e }, 'chat stream failed');
        res.write(formatSse('error', { error: err.code, message: err.message, status: err.status }));
      }
    }
    res.end();
  };
  r.post(['/api/chat', '/api/v1/chat'], jsonBody(Math.min(CHAT_BODY_BYTES, ctx.deps.settings.service.maxBodyBytes)), handle);
  return r;
}
