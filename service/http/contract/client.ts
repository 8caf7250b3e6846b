import type { z } from 'zod';
import { CONTENT_COLLECTIONS, HTTP_ROUTES, type ContentCollection } from '../../../contract/routes';
import { parseSse } from '../../chat/sse';
import type { chatAnswerSchema, chatEvents, chatRequest } from './chat';
import type { listQuery, listResponseSchema } from './content';
import type { ErrorBody } from './errors';
import type { batchRefusedSchema, batchResponseSchema, itemFilterSchema, itemPatchDoc } from './ingest';
import type { itemInput, itemSchema } from './item';
import type { SearchBody, searchParams, SearchResponse } from './search';

/**
 * A small typed client of the service's API, typed by the same zod schemas the routes validate
 * with (so parameters and answers are checked at compile time and cannot drift from the
 * OpenAPI document, which is generated from them). Uses the global `fetch`; no dependencies at
 * run time, so the search page (service/web/page/, bundled by scripts/build-page.ts) and the
 * ingest CLI (scripts/ingest.ts) send their requests with it too.
 */
/** A list parameter's value in the client: one value, or several. */
type OneOrList<T> = T extends ReadonlyArray<infer U> ? U | readonly U[] : T;
/**
 * The parameters as the route reads them (the schema's output: its input side accepts the
 * query's strings too); a list parameter takes one value or several, which go as repeated
 * parameters (`type: 'article'` or `type: ['article', 'project']`).
 */
export type SearchParams = Partial<{
  [K in keyof z.output<typeof searchParams>]: OneOrList<z.output<typeof searchParams>[K]>;
}>;
export type { SearchBody, SearchResponse } from './search';
export type ItemInput = z.input<typeof itemInput>;
export type Item = z.output<typeof itemSchema>;
export type ListParams = Partial<z.output<typeof listQuery>>;
export type ItemList = z.output<typeof listResponseSchema>;
export type BatchResponse = z.output<typeof batchResponseSchema>;
export type BatchRefused = z.output<typeof batchRefusedSchema>;
/** What a batch answers with its per-item results: 201 (all stored), 207 (some) or 422 (none). */
export type BatchOutcome = BatchResponse | BatchRefused;
/** Which items `deleteWhere` deletes: at least one of `type`, `tag`, `date_before` (`YYYY-MM-DD`). */
export type ItemFilter = z.input<typeof itemFilterSchema>;
/** A patch: the item's id and the fields that replace its stored ones. */
export type ItemPatch = z.input<typeof itemPatchDoc>;
/** What `delete`, `deleteWhere` and `patch` did (`BatchResponse.operations`). */
export type OperationsOutcome = NonNullable<BatchResponse['operations']>;
export type ChatRequest = z.input<typeof chatRequest>;
export type ChatAnswer = z.output<typeof chatAnswerSchema>;
export type ItemType = Item['type'];
export type Collection = ContentCollection;
/** One server-sent event of a streamed chat answer: its name and its JSON data. */
export type ChatEvent = {
  [K in keyof typeof chatEvents]: { readonly event: K; readonly data: z.output<(typeof chatEvents)[K]> };
}[keyof typeof chatEvents];

/** A 4xx/5xx answer: its status, `{error, message, field?}` body and (429, 503) `Retry-After` seconds. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly retryAfter?: number,
  ) {
    super(`${status} ${body.error}: ${body.message}`);
    this.name = 'ApiError';
  }
}

export interface ClientOptions {
  /** e.g. `http://localhost:8080` */
  readonly baseUrl: string;
  /** API_TOKEN, sent as a bearer token on writes. */
  readonly token?: string;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

export interface SearchClient {
  search(params: SearchParams): Promise<SearchResponse>;
  /** `POST /api/search`: the parameters as a JSON body, which may carry a query `vector` (issue 41). */
  searchBody(body: SearchBody): Promise<SearchResponse>;
  list(collection: Collection, params?: ListParams): Promise<ItemList>;
  item(collection: Collection, id: string): Promise<Item>;
  ingest(item: ItemInput): Promise<Item>;
  /** 201, 207 and 422 (none stored) resolve with every item's result; `stored` and `failed` count them. */
  ingestBatch(items: readonly ItemInput[]): Promise<BatchOutcome>;
  /** Deletes items by id (up to 1,000): ids not held come back in `not_found`, not as an error. */
  delete(ids: readonly string[]): Promise<OperationsOutcome>;
  /** Deletes every item that matches `filter`; `delete_where` says how many and which. */
  deleteWhere(filter: ItemFilter): Promise<OperationsOutcome>;
  /** Replaces some fields of existing items (up to 1,000); all or nothing (a 422 names the field or id at fault). */
  patch(patches: readonly ItemPatch[]): Promise<OperationsOutcome>;
  chat(request: ChatRequest): Promise<ChatAnswer>;
  /** The answer as it streams (`Accept: text/event-stream`): `sources`, `delta`…, `usage`, then `done` or `error`. */
  chatStream(request: ChatRequest): AsyncGenerator<ChatEvent>;
}

/** A route table path with its `:name` parameters filled in (percent-encoded). */
function fill(path: string, params: Readonly<Record<string, string>>): string {
  return path.replace(/:([A-Za-z_$][\w$]*)/g, (_, name: string) => encodeURIComponent(params[name]));
}

/** A query string of `params`; an array is the parameter repeated (`type=article&type=project`). */
function query(params: object): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (Array.isArray(v)) for (const x of v as unknown[]) q.append(k, String(x));
    else if (v !== undefined && v !== null) q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** An answer that is not a success, as an ApiError (a body that is not JSON is named as such). */
async function apiError(res: Response): Promise<ApiError> {
  const body = (await res
    .json()
    .catch(() => ({ error: 'invalid_answer', message: `${res.status} without a JSON body` }))) as ErrorBody;
  const retryAfter = Number(res.headers.get('retry-after') ?? NaN);
  return new ApiError(res.status, body, Number.isFinite(retryAfter) ? retryAfter : undefined);
}

/** The chunks of a fetch body (a reader: not every browser iterates a ReadableStream). */
async function* chunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    yield value;
  }
}

/** The `operations` of a batch answer (always present when the request held operations). */
function operations(answer: BatchResponse): OperationsOutcome {
  return answer.operations ?? { deleted: [], not_found: [], patched: [] };
}

/** The client. */
export function createClient(opts: ClientOptions): SearchClient {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? ((input: string, init?: RequestInit) => fetch(input, init));
  const headersFor = (body: unknown, write: boolean, accept = 'application/json') => ({
    accept,
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...(write && opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
  });
  async function send(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    write = false,
    accept?: string,
  ): Promise<Response> {
    return doFetch(`${base}${path}`, {
      method,
      headers: headersFor(body, write, accept),
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  }
  async function call<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    write = false,
    ok: readonly number[] = [],
  ): Promise<T> {
    const res = await send(method, path, body, write);
    if (!res.ok && !ok.includes(res.status)) throw await apiError(res);
    return (await res.json()) as T;
  }
  const R = HTTP_ROUTES;
  return {
    search: (params) => call(R.searchGet.method, `${R.searchGet.path}${query(params)}`),
    searchBody: (body) => call(R.searchPost.method, R.searchPost.path, body),
    list: (collection, params = {}) => {
      const route = R[CONTENT_COLLECTIONS[collection].list];
      return call(route.method, `${route.path}${query(params)}`);
    },
    item: (collection, id) => {
      const route = R[CONTENT_COLLECTIONS[collection].item];
      return call(route.method, fill(route.path, { id }));
    },
    ingest: (item) => call(R.ingest.method, R.ingest.path, item, true),
    ingestBatch: (items) => call(R.ingestBatch.method, R.ingestBatch.path, { items }, true, [422]),
    delete: async (ids) => operations(await call(R.ingestBatch.method, R.ingestBatch.path, { delete: ids }, true)),
    deleteWhere: async (filter) =>
      operations(await call(R.ingestBatch.method, R.ingestBatch.path, { delete_where: filter }, true)),
    patch: async (patches) =>
      operations(await call(R.ingestBatch.method, R.ingestBatch.path, { patch: patches }, true)),
    chat: (request) => call(R.chat.method, R.chat.path, request),
    async *chatStream(request) {
      const res = await send(R.chat.method, R.chat.path, request, false, 'text/event-stream');
      if (!res.ok || !res.body) throw await apiError(res);
      for await (const { event, data } of parseSse(chunks(res.body)))
        yield { event, data: JSON.parse(data) } as ChatEvent;
    },
  };
}
