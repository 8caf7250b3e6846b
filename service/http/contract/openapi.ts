import { z } from 'zod';
import { SERVICE_VERSION } from '../../lib/version';
import {
  OPERATIONS,
  RATE_LIMITED,
  SERVER_REFUSALS,
  SSE_EVENTS,
  type ContractOperation,
  type ContractResponse,
} from './routes';
import { SERVICE_NAME } from '../../../contract';

type Json = Record<string, unknown>;

/** The response headers the document names (rate limiting of spec §2.4/§4.3, exports). */
const HEADERS: Readonly<Record<string, Json>> = {
  'X-RateLimit-Limit': { description: "The most constrained tier's limit per window.", schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests that tier would admit right now.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Unix seconds when its bucket is full again.', schema: { type: 'integer' } },
  'RateLimit-Policy': {
    description: 'Every applicable tier (IETF draft-ietf-httpapi-ratelimit-headers), e.g. `"ip";q=100;w=60`.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'Remaining requests and seconds until full, per tier, e.g. `"ip";r=99;t=1`.',
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Whole seconds until every tier admits again (429 only).',
    schema: { type: 'integer', minimum: 1 },
  },
  'Content-Disposition': { description: 'attachment; filename="<name>".', schema: { type: 'string' } },
};
/** The headers every answer of a rate-limited operation carries while rate limiting is enabled. */
const LIMIT_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
];

/**
 * Converts zod schemas to JSON Schema 2020-12 (OpenAPI 3.1's dialect), gathering every schema with
 * an `id` into `components.schemas` and pointing at it there. `example` (deprecated in 3.1) becomes
 * `examples: [..]`.
 */
class SchemaSet {
  readonly components: Record<string, Json> = {};

  convert(schema: z.ZodType, io: 'input' | 'output'): Json {
    const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
    delete out.$schema;
    const defs = (out.$defs ?? {}) as Record<string, Json>;
    delete out.$defs;
    for (const [id, def] of Object.entries(defs)) {
      const fixed = fix(def) as Json;
      const known = this.components[id];
      if (known && JSON.stringify(known) !== JSON.stringify(fixed))
        throw new Error(`schema ${id} differs between uses (${io}): give one of them another id`);
      this.components[id] = fixed;
    }
    return fix(out) as Json;
  }
}

/** Refs to components, `example` to `examples`. */
function fix(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(fix);
  if (typeof v !== 'object' || v === null) return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === '$ref' && typeof x === 'string') out.$ref = x.replace('#/$defs/', '#/components/schemas/');
    else if (k === 'example') out.examples = [x];
    else out[k] = fix(x);
  }
  return out;
}

function parameters(set: SchemaSet, where: 'path' | 'query', obj: z.ZodObject | undefined): Json[] {
  if (!obj) return [];
  const schema = set.convert(obj, 'input');
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => {
    const { description, examples, ...rest } = s;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(description ? { description } : {}),
      schema: rest,
      ...(Array.isArray(examples) ? { example: examples[0] } : {}),
    };
  });
}

function response(set: SchemaSet, r: ContractResponse, limited: boolean): Json {
  const headers = [...(r.headers ?? []), ...(limited ? LIMIT_HEADERS : [])];
  return {
    description: r.description,
    ...(headers.length
      ? { headers: Object.fromEntries([...new Set(headers)].map((h) => [h, { $ref: `#/components/headers/${h}` }])) }
      : {}),
    ...(r.content
      ? {
          content: Object.fromEntries(
            Object.entries(r.content).map(([type, s]) => [type, s ? { schema: set.convert(s, 'output') } : {}]),
          ),
        }
      : {}),
  };
}

function operation(set: SchemaSet, op: ContractOperation): Json {
  const limited = !op.operational;
  const responses: Record<string, Json> = {};
  for (const [status, r] of Object.entries(op.responses)) responses[status] = response(set, r, limited);
  if (limited) responses['429'] = response(set, RATE_LIMITED, false);
  // Node's refusals before routing carry no rate-limit headers: no limiter ran.
  for (const [status, r] of Object.entries(SERVER_REFUSALS)) responses[status] = response(set, r, false);
  const params = [...parameters(set, 'path', op.pathParams), ...parameters(set, 'query', op.query)];
  return {
    operationId: op.operationId,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    ...(params.length ? { parameters: params } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: true,
            content: { [op.body.contentType]: { schema: set.convert(op.body.schema, 'input') } },
          },
        }
      : {}),
    ...(op.bearer ? { security: [{ bearerAuth: [] }] } : { security: [] }),
    responses,
  };
}

/** The OpenAPI 3.1 document of the service, generated from the route schemas (OPERATIONS). */
export function openApiDocument(): Json {
  const set = new SchemaSet();
  const paths: Record<string, Record<string, Json>> = {};
  for (const op of OPERATIONS) (paths[op.path] ??= {})[op.method] = operation(set, op);
  // The SSE events of chat are components of their own: the stream's media type has no schema.
  for (const schema of Object.values(SSE_EVENTS)) set.convert(schema, 'output');
  return {
    openapi: '3.1.0',
    info: {
      title: SERVICE_NAME,
      version: SERVICE_VERSION,
      description:
        "Search, chat and ingest over a site's content. Generated from the route schemas (service/http/contract/); do not edit. Writes need `Authorization: Bearer <API_TOKEN>`. Every endpoint but the operational ones (tag `operations`) is rate limited and answers 429 with `Retry-After` when a tier is exhausted.",
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'The service itself' }],
    tags: [
      { name: 'search', description: 'Full-text search' },
      { name: 'content', description: 'The published items' },
      { name: 'chat', description: 'Answers from the content, with sources' },
      { name: 'ingest', description: 'Writes (bearer token)' },
      { name: 'export', description: 'The content as files' },
      { name: 'eval', description: 'Search quality' },
      { name: 'operations', description: 'Health, metrics, limits: never rate limited, not counted as traffic' },
    ],
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(set.components).sort(([a], [b]) => a.localeCompare(b))),
      headers: HEADERS,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API_TOKEN of the deployment.' },
      },
    },
  };
}
