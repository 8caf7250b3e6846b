import { Router, type Request, type Response } from 'express';
import { filterOf } from '../content/item-filter';
import type { ChatInput } from '../chat/chat-service';
import { formatSse } from '../chat/sse';
import { ProviderError } from '../chat/types';
import { chatRequest } from '../http/contract/chat';
import { validate } from '../http/contract/validate';
import { HttpError } from '../http/errors';
import { jsonBody } from '../http/json-body';
import { jsonObject } from '../http/json-object';
import { countAs } from '../metrics/middleware';
import type { FeatureContext } from './context';
import { HTTP_ROUTES } from '../../contract';

export { MAX_HISTORY, MAX_MESSAGE_CHARS } from '../http/contract/chat';
/**
 * Largest chat body, bytes (capped by `MAX_BODY_SIZE`): a question and `MAX_HISTORY` turns of
 * 8,000 characters, with room for JSON escapes.
 */
export const CHAT_BODY_BYTES = 1024 * 1024;

function parseChat(req: Request): ChatInput {
  const r = validate(chatRequest, jsonObject(req, '{"message": "What have you written about Kubernetes?"}'));
  return { message: r.message, history: r.history ?? [], filter: filterOf(r) };
}

/**
 * How long a client may take to read the end of a streamed answer once it is written, ms: past
 * it the connection is destroyed. Only a client that stopped reading waits here (the answer's
 * own time is up or its last events are buffered), holding at most the socket's buffers.
 */
export const STREAM_END_GRACE_MS = 30_000;

/** 502/504 for provider failures; `limit` names the setting when an answer went past one. */
function providerHttpError(e: ProviderError): HttpError {
  const details = {
    ...(e.upstreamStatus ? { upstream_status: e.upstreamStatus } : {}),
    ...(e.limit ? { limit: e.limit } : {}),
  };
  const more = Object.keys(details).length ? details : undefined;
  return e.kind === 'timeout'
    ? new HttpError(504, 'upstream_timeout', e.message, more)
    : new HttpError(502, 'upstream_error', e.message, more);
}

/** Resolves on 'drain' or 'close' of `res`, or when `deadline` aborts, whichever is first; leaves no listener behind. */
function drainedOrDeadline(res: Response, deadline: AbortSignal): Promise<void> {
  if (deadline.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      deadline.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    deadline.addEventListener('abort', done);
  });
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
 * `usage`, `done` (or `error` if the provider breaks off mid-answer or the answer goes past a
 * limit; the request then counts as failed with the error's status).
 *
 * A stream honours backpressure: while the client's socket is full nothing more is asked of the
 * provider, so a client that reads slowly or not at all holds the provider back, not memory
 * (the answer's time limit ends the wait). A client that goes away does not stop the answer: it
 * is read to its end (within the limits) without being written, so its tokens are counted.
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
    res.set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    const deadline = stream.deadline;
    const send = async (event: string) => {
      if (signal.aborted) return;
      if (!res.write(event)) await drainedOrDeadline(res, deadline);
    };
    try {
      await send(formatSse('sources', { sources: stream.sources }));
      for await (const chunk of stream.chunks) {
        if (chunk.kind === 'delta') await send(formatSse('delta', { text: chunk.text }));
        else await send(formatSse('usage', { usage: chunk.usage, model: chunk.model }));
      }
      if (!signal.aborted) res.write(formatSse('done', {}));
    } catch (e) {
      const err =
        e instanceof ProviderError
          ? providerHttpError(e)
          : new HttpError(500, 'internal_error', 'the answer broke off');
      if (!(e instanceof ProviderError)) ctx.deps.logger.error({ err: e }, 'chat stream failed');
      countAs(res, err.status);
      if (!signal.aborted) {
        const limit = e instanceof ProviderError && e.limit ? { limit: e.limit } : {};
        res.write(formatSse('error', { error: err.code, message: err.message, status: err.status, ...limit }));
      }
    }
    res.end();
    if (!res.writableFinished && !res.destroyed) {
      const grace = setTimeout(() => res.destroy(), STREAM_END_GRACE_MS);
      grace.unref();
      res.once('close', () => clearTimeout(grace));
    }
  };
  r.post(
    [HTTP_ROUTES.chat.path, HTTP_ROUTES.chatV1.path],
    jsonBody(Math.min(CHAT_BODY_BYTES, ctx.deps.settings.service.maxBodyBytes)),
    handle,
  );
  return r;
}
