import type { z } from 'zod';
import type { chatAnswerSchema, chatRequest } from './chat';
import type { listQuery, listResponseSchema } from './content';
import type { ErrorBody } from './errors';
import type { batchRefusedSchema, batchResponseSchema } from './ingest';
import type { itemInput, itemSchema } from './item';
import type { searchParams, searchResponseSchema } from './search';

/**
 * A small typed client of the service's API, typed by the same zod schemas the routes validate
 * with (so parameters and answers are checked at compile time and cannot drift from the
 * OpenAPI document, which is generated from them). Uses the global `fetch`; no dependencies at
 * run time.
 */
/** The parameters as the route reads them (the schema's output: its input side accepts the query's strings too). */
export type SearchParams = Pick<z.output<typeof searchParams>, 'q'> & Partial<Omit<z.output<typeof searchParams>, 'q'>>;
export type SearchResponse = z.output<typeof searchResponseSchema>;
export type ItemInput = z.input<typeof itemInput>;
export type Item = z.output<typeof itemSchema>;
export type ListParams = Partial<z.output<typeof listQuery>>;
export type ItemList = z.output<typeof listResponseSchema>;
export type BatchResponse = z.output<typeof batchResponseSchema>;
export type BatchRefused = z.output<typeof batchRefusedSchema>;
export type ChatRequest = z.input<typeof chatRequest>;
export type ChatAnswer = z.output<typeof chatAnswerSchema>;
export type Collection = 'articles' | 'projects' | 'experiences';

/** A 4xx/5xx answer: its status and `{error, message, field?}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
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
  list(collection: Collection, params?: ListParams): Promise<ItemList>;
  item(collection: Collection, id: string): Promise<Item>;
  ingest(item: ItemInput): Promise<Item>;
  /** 201 and 207 resolve (`failed` says how many were refused); 422 (none stored) rejects. */
  ingestBatch(items: readonly ItemInput[]): Promise<BatchResponse>;
  chat(request: ChatRequest): Promise<ChatAnswer>;
}

function query(params: object): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The client. */
export function createClient(opts: ClientOptions): SearchClient {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown, write = false): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (write && opts.token) headers.authorization = `Bearer ${opts.token}`;
    const res = await doFetch(`${base}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const data = (await res.json().catch(() => ({ error: 'invalid_answer', message: `${res.status} without a JSON body` }))) as unknown;
    if (!res.ok) throw new ApiError(res.status, data as ErrorBody);
    return data as T;
  }
  return {
    search: (params) => call('GET', `/api/search${query(params)}`),
    list: (collection, params = {}) => call('GET', `/api/v1/${collection}${query(params)}`),
    item: (collection, id) => call('GET', `/api/v1/${collection}/${encodeURIComponent(id)}`),
    ingest: (item) => call('POST', '/api/ingest', item, true),
    ingestBatch: (items) => call('POST', '/api/ingest-batch', { items }, true),
    chat: (request) => call('POST', '/api/chat', request),
  };
}
