import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type * as OpenApi from '../../service/http/contract/openapi';
import { isOperationalPath } from '../../service/metrics/request-types';

/**
 * Proves an answer of the service against its OpenAPI document (service/http/contract/): the
 * operation is documented, the status is one of its responses, documented headers that are
 * present have the documented form, the content type is documented and a JSON body validates
 * (ajv, JSON Schema 2020-12, OpenAPI 3.1's dialect). A path no operation takes must be the 404
 * (or a 429 or 400 before routing) with the error body. The search page and its files (outside
 * `/api/` and the operational paths) are not part of the API and are not checked.
 */
export interface Answer {
  readonly method: string;
  /** The request path as sent (percent-encoded; a query string is ignored). */
  readonly path: string;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

type Json = Record<string, unknown>;
interface Operation {
  readonly regexp: RegExp;
  readonly path: string;
  readonly method: string;
  readonly responses: Record<
    string,
    { headers?: Record<string, { $ref: string }>; content?: Record<string, { schema?: Json }> }
  >;
}

let cached:
  | {
      ops: Operation[];
      ajv: Ajv2020;
      headers: Record<string, { schema: Json }>;
      validators: Map<string, ValidateFunction>;
    }
  | undefined;

/**
 * Where the processes of one jest run share the OpenAPI document (a file in a folder the run makes
 * and removes, test/helpers/run-folders.js): loading the route schemas and zod-to-openapi
 * (0.22 s), generating it (0.13 s) and ajv's meta-schema check of it (0.1 s) were each suite's CPU,
 * for the same document every time within a run. Unset, each process generates its own.
 */
export const SHARED_DOCUMENT_ENV = 'OPENAPI_DOCUMENT_FILE';

/** The run's shared OpenAPI document, if a process of the run has shared it. */
function sharedDocument(): Json | undefined {
  const file = process.env[SHARED_DOCUMENT_ENV];
  if (!file) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Json;
  } catch {
    return undefined; // not shared yet: this process generates it
  }
}

/** The OpenAPI document generated from the route schemas of this checkout. */
function generatedDocument(): Json {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when generating, see SHARED_DOCUMENT_ENV
  return (require('../../service/http/contract/openapi') as typeof OpenApi).openApiDocument() as Json;
}

/** Shares `doc` with the run's other processes (when the run has a folder for it). */
function share(doc: Json): void {
  const file = process.env[SHARED_DOCUMENT_ENV];
  if (!file) return;
  // Written aside and renamed: a process reading it meanwhile sees all of it or none.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(doc));
  renameSync(tmp, file);
}

function contract() {
  if (cached) return cached;
  const shared = sharedDocument();
  const doc = (shared ?? generatedDocument()) as {
    paths: Record<string, Record<string, Operation['responses'] extends infer R ? { responses: R } : never>>;
    components: { headers: Record<string, { schema: Json }> };
  };
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    // `{name}` of the export also stands for several segments (`/api/export/a/b` is its 400).
    let source = '';
    for (const part of path.split(/(\{[^}]+\})/)) {
      if (part.startsWith('{')) source += path.startsWith('/api/export/') ? '(?:.+)' : '(?:[^/]+)';
      else source += part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
    }
    for (const [method, op] of Object.entries(methods))
      ops.push({
        regexp: new RegExp(`^${source}/?$`, 'i'),
        path,
        method: method.toUpperCase(),
        responses: op.responses,
      });
  }
  // Literal paths before templated ones, as Express would only reach the template when no literal matches.
  ops.sort((a, b) => Number(a.path.includes('{')) - Number(b.path.includes('{')));
  // ajv checks the document against JSON Schema's meta-schema as it is added (~0.1 s): once a run,
  // by the process that generated it, which shares it only once it passed; the others add that text.
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: shared === undefined });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi.json' } as Json);
  if (!shared) share(doc);
  cached = { ops, ajv, headers: doc.components.headers, validators: new Map() };
  return cached;
}

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function validator(pointer: string): ValidateFunction {
  const c = contract();
  let v = c.validators.get(pointer);
  if (!v) {
    v = c.ajv.compile({ $ref: `openapi.json#${pointer}` });
    c.validators.set(pointer, v);
  }
  return v;
}

function checkBody(pointer: string, text: string, what: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `${what}: the body is not JSON: ${text.slice(0, 200)}`;
  }
  const v = validator(pointer);
  if (v(body)) return undefined;
  return `${what}: the body does not match the document: ${c(v.errors)}; body ${text.slice(0, 300)}`;
}

const c = (errors: ValidateFunction['errors']) =>
  (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('; ');

/** Why `a` is not an answer the document allows, or undefined when it is. */
export function contractProblem(a: Answer): string | undefined {
  const method = a.method.toUpperCase();
  // Express answers OPTIONS itself (Allow header); not an operation of the API.
  if (method === 'OPTIONS') return undefined;
  // As Express reads it: the query string and a fragment sent on the wire are not the path.
  const path = a.path.split(/[?#]/)[0];
  const what = `${method} ${path} → ${a.status}`;
  // The search page and its files (`/`, `/ui/…`, the demo's documents) are not part of the API.
  if (!/^\/api(\/|$)/i.test(path) && !isOperationalPath(path)) return undefined;
  const { ops, headers: known } = contract();
  const op = ops.find((o) => o.method === (method === 'HEAD' ? 'GET' : method) && o.regexp.test(path));
  const type = String(a.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  if (!op) {
    const body = a.status === 429 ? '/components/schemas/RateLimited' : '/components/schemas/Error';
    if (![400, 404, 413, 429].includes(a.status))
      return `${what}: no documented operation takes this request, and the answer is not a 404`;
    if (method === 'HEAD') return undefined;
    if (type !== 'application/json') return `${what}: content-type ${type}, not application/json`;
    return checkBody(body, a.text, what);
  }
  const response = op.responses[String(a.status)];
  if (!response)
    return `${what}: status ${a.status} is not documented for ${op.method} ${op.path} (documented: ${Object.keys(op.responses).join(', ')})`;
  for (const [name, ref] of Object.entries(response.headers ?? {})) {
    const value = a.headers[name.toLowerCase()];
    if (value === undefined) continue;
    const schema = known[ref.$ref.split('/').pop()!]?.schema;
    if (schema?.type === 'integer' && !/^\d+$/.test(String(value)))
      return `${what}: header ${name} is ${JSON.stringify(value)}, not an integer`;
  }
  if (method === 'HEAD' || !response.content) return undefined;
  if (!(type in response.content))
    return `${what}: content-type ${type} is not documented (documented: ${Object.keys(response.content).join(', ')})`;
  if (!response.content[type].schema) return undefined;
  return checkBody(
    `/paths/${escape(op.path)}/${op.method.toLowerCase()}/responses/${a.status}/content/${escape(type)}/schema`,
    a.text,
    what,
  );
}

/**
 * Problems found in answers of the real service process (tools/harness/service-process.ts proves each
 * one); test/helpers/contract-setup.ts fails the test file that saw any.
 */
export { contractProblemsSeen } from './openapi-answers-seen';
