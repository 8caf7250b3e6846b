import type { ServiceResponse } from '../../tools/harness/service-process';

/**
 * Why `res` is not a well-formed answer of this API, or undefined when it is: an error (4xx/5xx)
 * is JSON `{error, message}` with string fields and no stack trace; a success with a JSON
 * content type parses. Successes of other types (exports, the chat's SSE stream) and bodiless
 * answers (HEAD, 204, 304) pass as they are.
 */
export function malformedAnswer(res: ServiceResponse, method = 'GET'): string | undefined {
  const type = String(res.headers['content-type'] ?? '');
  if (method === 'HEAD' || res.status === 204 || res.status === 304) return undefined;
  if (res.status >= 400) {
    if (!type.startsWith('application/json'))
      return `${res.status} with content-type ${JSON.stringify(type)}: ${res.text.slice(0, 200)}`;
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      return `${res.status} body is not JSON: ${res.text.slice(0, 200)}`;
    }
    const { error, message } = (body ?? {}) as { error?: unknown; message?: unknown };
    if (typeof error !== 'string' || typeof message !== 'string')
      return `${res.status} body lacks {error, message}: ${res.text.slice(0, 200)}`;
    if (/\n\s+at .+:\d+:\d+/.test(res.text)) return `${res.status} body carries a stack trace`;
    return undefined;
  }
  if (type.startsWith('application/json')) {
    try {
      JSON.parse(res.text);
    } catch {
      return `${res.status} JSON success does not parse: ${res.text.slice(0, 200)}`;
    }
  }
  return undefined;
}
