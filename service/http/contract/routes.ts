import { z } from 'zod';
import {
  CONTENT_COLLECTIONS,
  HTTP_ROUTES,
  type ContentCollection,
  type HttpRoute,
  type RouteId,
} from '../../../contract';
import { EXPORTS } from '../../content/export';
import { chatAnswerSchema, chatEvents, chatRequest } from './chat';
import { COLLECTION_ITEM_TYPES, itemIdParams, listQuery, listResponseSchema } from './content';
import { errorSchema, invalidItemSchema, rateLimitedSchema } from './errors';
import { evalReportSchema, evalRequest } from './eval';
import { exportNameDoc } from './export';
import { batchRefusedSchema, batchRequestDoc, batchResponseSchema } from './ingest';
import { itemInput, itemSchema } from './item';
import { healthSchema, liveSchema, metricsSchema, rateLimitRecordSchema, readySchema } from './ops';
import { searchBody, searchParams, searchResponseSchema } from './search';
import { uploadRequestDoc, uploadResponseSchema } from './upload';

/** One answer of an operation: a JSON body (schema), another media type, or none. */
export interface ContractResponse {
  readonly description: string;
  /** Media type → body schema (`undefined`: a body of that type, e.g. text, without a JSON schema). */
  readonly content?: Readonly<Record<string, z.ZodType | undefined>>;
  /** Header names (of `HEADERS` in openapi.ts) this answer carries. */
  readonly headers?: readonly string[];
}

/** One operation of the HTTP contract: a method on a path with its inputs and every answer. */
export interface ContractOperation {
  readonly method: 'get' | 'post';
  /** OpenAPI path syntax (`{id}`); the Express route is the same with `:id`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tag: 'search' | 'content' | 'chat' | 'ingest' | 'export' | 'eval' | 'operations';
  readonly description?: string;
  readonly pathParams?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: { readonly contentType: string; readonly schema: z.ZodType };
  readonly responses: Readonly<Record<number, ContractResponse>>;
  /** Needs `Authorization: Bearer <API_TOKEN>` (writes). */
  readonly bearer?: boolean;
  /** Operational endpoints are never rate limited (spec §4.1); everything else is. */
  readonly operational?: boolean;
}

const json = (schema: z.ZodType) => ({ 'application/json': schema });
const error = (description: string): ContractResponse => ({ description, content: json(errorSchema) });

const BAD_REQUEST = error('Bad input: the field is named in `field`.');
const TOO_LARGE = error('The body is over its limit (`payload_too_large`, or a batch or upload over its counts).');
const UNSUPPORTED = error('The body is not of the media type the route reads, or in an unsupported encoding.');
const WRITE_REFUSALS: Record<number, ContractResponse> = {
  401: error('No bearer token (`unauthorized`); the answer carries `WWW-Authenticate: Bearer`.'),
  403: error(
    'A wrong token (`forbidden`), or writes are disabled: no API_TOKEN in staging or production (`writes_disabled`).',
  ),
  503: error('The content store cannot take writes now (`store_unavailable`); nothing was stored.'),
};

/** A route table path in OpenAPI's syntax: `:name` is `{name}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_$][\w$]*)/g, '{$1}');
}

/** What an operation takes from the route table: its method, path, operationId and whether it is operational. */
function route(id: RouteId): Pick<ContractOperation, 'method' | 'path' | 'operationId' | 'operational'> {
  const r: HttpRoute = HTTP_ROUTES[id];
  return {
    method: r.method === 'GET' ? 'get' : 'post',
    path: openApiPath(r.path),
    operationId: id,
    ...(r.operational ? { operational: true } : {}),
  };
}

const exportTypes = [...new Set([...EXPORTS.values()].map((e) => e.contentType.split(';')[0].trim()))];

/**
 * Every operation the service answers: the functional API (rate limited) and the operational
 * endpoints of spec §4.1 (not limited, not counted). The OpenAPI document is generated from this
 * list (openapi.ts), and a test checks it against the routes Express really runs.
 */
export const OPERATIONS: readonly ContractOperation[] = [
  {
    ...route('searchGet'),
    summary: 'Search the content',
    tag: 'search',
    description:
      'Ranked results with snippets; repeated queries are answered from the result cache until the next write.',
    query: searchParams,
    responses: { 200: { description: 'The ranked results.', content: json(searchResponseSchema) }, 400: BAD_REQUEST },
  },
  {
    ...route('searchPost'),
    summary: 'Search the content (parameters as a JSON body)',
    tag: 'search',
    body: { contentType: 'application/json', schema: searchBody },
    responses: {
      200: { description: 'The ranked results.', content: json(searchResponseSchema) },
      400: BAD_REQUEST,
      413: TOO_LARGE,
      415: UNSUPPORTED,
    },
  },
  ...(Object.keys(CONTENT_COLLECTIONS) as ContentCollection[]).flatMap((collection): ContractOperation[] => {
    const type = COLLECTION_ITEM_TYPES[collection];
    return [
      {
        ...route(CONTENT_COLLECTIONS[collection].list),
        summary: `List the ${collection}, newest first, without bodies`,
        tag: 'content',
        query: listQuery,
        responses: {
          200: { description: `A page of ${collection}.`, content: json(listResponseSchema) },
          400: BAD_REQUEST,
        },
      },
      {
        ...route(CONTENT_COLLECTIONS[collection].item),
        summary: `One ${type}, with its body`,
        tag: 'content',
        pathParams: itemIdParams,
        responses: {
          200: { description: `The ${type}.`, content: json(itemSchema) },
          400: error('The path holds malformed percent-encoding.'),
          404: error(`No ${type} with this id.`),
        },
      },
    ];
  }),
  {
    ...route('ingest'),
    summary: 'Store one item',
    tag: 'ingest',
    bearer: true,
    body: { contentType: 'application/json', schema: itemInput },
    responses: {
      201: { description: 'Stored (created or replaced); every replica serves it.', content: json(itemSchema) },
      400: BAD_REQUEST,
      413: TOO_LARGE,
      415: UNSUPPORTED,
      422: {
        description: 'The item is invalid: the first bad field named, every issue listed.',
        content: json(invalidItemSchema),
      },
      ...WRITE_REFUSALS,
    },
  },
  {
    ...route('ingestBatch'),
    summary: 'Store, delete and patch items in one atomic write',
    tag: 'ingest',
    bearer: true,
    description:
      'Up to 1,000 `items`, and beside them `delete` (up to 1,000 ids), `delete_where` (a filter) and `patch` (up to 1,000 `{id, ...fields}`); at least one of the four. A request of items alone stores the valid ones (207 when some are invalid); one with `delete`, `delete_where` or `patch` is all or nothing. Every operation is evaluated against the content as it is when the request runs; an id may be named once across `delete`, `patch` and `items` (an id `delete_where` matches may also be in `delete`). A delete of an id not held is reported in `not_found`, not refused. The answer says what each operation did (`operations`).',
    body: { contentType: 'application/json', schema: batchRequestDoc },
    responses: {
      200: { description: 'Operations without items applied.', content: json(batchResponseSchema) },
      201: { description: 'Every item stored (and every operation applied).', content: json(batchResponseSchema) },
      207: { description: 'Some items stored; the results say which and why not.', content: json(batchResponseSchema) },
      400: BAD_REQUEST,
      413: TOO_LARGE,
      415: UNSUPPORTED,
      422: {
        description:
          'Nothing stored: every item was invalid (`invalid_items`, with the per-item results), or, in a request with operations, an invalid item (`invalid_items`) or a refused operation: a patch that breaks a field rule (`invalid_item`, with `issues`), of an id not held (`unknown_id`) or of an unknown field (`unknown_field`), an id named by two operations (`id_in_two_operations`); `field` names it.',
        content: json(batchRefusedSchema.or(errorSchema)),
      },
      ...WRITE_REFUSALS,
    },
  },
  {
    ...route('upload'),
    summary: 'Upload files of items (all or nothing)',
    tag: 'ingest',
    bearer: true,
    body: { contentType: 'multipart/form-data', schema: uploadRequestDoc },
    responses: {
      201: { description: 'Every item of every file stored.', content: json(uploadResponseSchema) },
      400: BAD_REQUEST,
      413: TOO_LARGE,
      415: error('Not multipart/form-data, or a file of an unsupported type.'),
      422: { description: 'An invalid item, or items sharing an id; nothing was stored.', content: json(errorSchema) },
      ...WRITE_REFUSALS,
    },
  },
  {
    ...route('exportIndex'),
    summary: 'Names the exports (always 404: name one)',
    tag: 'export',
    responses: { 404: error(`Name an export: ${openApiPath(HTTP_ROUTES.export.path)}.`) },
  },
  {
    ...route('export'),
    summary: 'Download the content as one file',
    tag: 'export',
    description:
      'Streamed as an attachment. A path-like name (separators, dot-segments, several segments) is a 400 `invalid_export_name`; no file is ever read.',
    pathParams: z.object({ name: exportNameDoc }),
    responses: {
      200: {
        description: 'The export, as an attachment.',
        content: Object.fromEntries(exportTypes.map((t) => [t, undefined])),
        headers: ['Content-Disposition'],
      },
      400: error('A path, not a name (`invalid_export_name`).'),
      404: error('No export of that name.'),
    },
  },
  {
    ...route('lastEvaluation'),
    summary: "This replica's last evaluation report",
    tag: 'eval',
    responses: {
      200: { description: 'The last report.', content: json(evalReportSchema) },
      404: error('No evaluation has run yet on this replica.'),
    },
  },
  {
    ...route('evaluate'),
    summary: "Score the live index with trec_eval's measures",
    tag: 'eval',
    body: { contentType: 'application/json', schema: evalRequest },
    responses: {
      200: { description: 'The report.', content: json(evalReportSchema) },
      400: BAD_REQUEST,
      413: TOO_LARGE,
      415: UNSUPPORTED,
    },
  },
  ...(['chat', 'chatV1'] as const).map((id): ContractOperation => ({
    ...route(id),
    summary: 'Answer a question from the content, with sources',
    tag: 'chat',
    description:
      "With `Accept: text/event-stream` the answer streams as server-sent events: one `sources`, `delta`…, one `usage`, then `done` (or `error` if the provider breaks off mid-answer or the answer passes a limit: `limit` names the setting, AI_ANSWER_MAX_CHARS, AI_ANSWER_TIMEOUT_MS or AI_EVENT_MAX_BYTES); each event's data is JSON (schemas ChatEvent*). A 502/504 before the stream starts may carry `limit` too (AI_FIRST_BYTE_TIMEOUT_MS, AI_ANSWER_TIMEOUT_MS, AI_EVENT_MAX_BYTES).",
    body: { contentType: 'application/json', schema: chatRequest },
    responses: {
      200: {
        description: 'The answer (JSON), or its events (text/event-stream).',
        content: { 'application/json': chatAnswerSchema, 'text/event-stream': undefined },
      },
      400: BAD_REQUEST,
      413: TOO_LARGE,
      415: UNSUPPORTED,
      502: error('The AI provider failed (`upstream_error`).'),
      504: error('The AI provider did not answer in time (`upstream_timeout`).'),
    },
  })),
  ...(['health', 'apiHealth'] as const).map((id): ContractOperation => ({
    ...route(id),
    summary: 'The health record',
    tag: 'operations',
    responses: { 200: { description: 'Status, stores, rate limiting, health score.', content: json(healthSchema) } },
  })),
  {
    ...route('live'),
    summary: 'Liveness',
    tag: 'operations',
    responses: { 200: { description: 'The process answers.', content: json(liveSchema) } },
  },
  {
    ...route('ready'),
    summary: 'Readiness (follows the lifecycle only)',
    tag: 'operations',
    responses: {
      200: { description: 'Ready.', content: json(readySchema) },
      503: { description: 'Starting or draining.', content: json(readySchema) },
    },
  },
  {
    ...route('metrics'),
    summary: 'Request metrics as JSON',
    tag: 'operations',
    responses: { 200: { description: 'Requests, tokens, cache, by type.', content: json(metricsSchema) } },
  },
  {
    ...route('prometheusMetrics'),
    summary: 'Metrics in the Prometheus text format',
    tag: 'operations',
    responses: {
      200: { description: 'Prometheus exposition (text format 0.0.4).', content: { 'text/plain': undefined } },
    },
  },
  {
    ...route('rateLimit'),
    summary: 'The rate-limit configuration and the key this request is charged to',
    tag: 'operations',
    responses: { 200: { description: 'The record of spec §2.2.', content: json(rateLimitRecordSchema) } },
  },
  {
    ...route('openapi'),
    summary: 'This document',
    tag: 'operations',
    responses: {
      200: { description: 'The OpenAPI 3.1 document of the service.', content: { 'application/json': undefined } },
    },
  },
];

/** The 429 answer every rate-limited operation may give. */
export const RATE_LIMITED: ContractResponse = {
  description: 'Rate limited: a tier is exhausted. Retry after `Retry-After` seconds.',
  content: json(rateLimitedSchema),
  headers: [
    'Retry-After',
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
    'RateLimit-Policy',
    'RateLimit',
  ],
};

/**
 * The answers Node's HTTP server gives before any route runs (http/client-errors.ts), which every
 * operation may therefore give: its request line and headers over Node's limit (16 KiB: a 20 KB
 * query string is enough), or the request not received in full within `HEADERS_TIMEOUT_MS` /
 * `REQUEST_TIMEOUT_MS`. Both close the connection.
 */
export const SERVER_REFUSALS: Readonly<Record<number, ContractResponse>> = {
  408: error(
    'The request did not arrive in full in time (`request_timeout`): its headers within HEADERS_TIMEOUT_MS (`field: headers`) or its body within REQUEST_TIMEOUT_MS (`field: body`). The connection is closed.',
  ),
  431: error(
    'The request line and headers are over 16 KiB together (`headers_too_large`, `field: headers`): send a shorter query string (search with POST) or fewer headers. The connection is closed.',
  ),
};

/** The SSE events of chat, for the document's components. */
export const SSE_EVENTS = chatEvents;
