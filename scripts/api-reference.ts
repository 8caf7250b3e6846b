/**
 * The reference part of docs/api.md, generated from the OpenAPI document (service/http/contract/):
 * one row per operation with its parameters, body, answers and access. `make readme` (and `make
 * openapi`) rewrite it; test/scripts/api-reference.test.ts keeps docs/api.md in sync.
 *
 *   npx ts-node -T scripts/api-reference.ts      rewrites docs/api.md in place
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from '../service/http/contract/openapi';

const START = '<!-- api-reference:start -->';
const END = '<!-- api-reference:end -->';

type Json = Record<string, unknown>;
interface Param {
  name: string;
  in: string;
  required: boolean;
  schema: Json;
}
interface Op {
  parameters?: Param[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, unknown>;
  security?: unknown[];
  summary: string;
}

function constraint(s: Json): string {
  const parts: string[] = [];
  if (s.type === 'integer') parts.push(`integer ${s.minimum ?? ''}–${s.maximum ?? ''}`);
  if (Array.isArray(s.enum)) parts.push(s.enum.join(' \\| '));
  if (s.$ref) parts.push(String(s.$ref).split('/').pop()!);
  if (s.type === 'string' && s.maxLength !== undefined) parts.push(`≤ ${s.maxLength} chars`);
  if (s.default !== undefined) parts.push(`default ${JSON.stringify(s.default)}`);
  return parts.join(', ');
}

function bodyOf(op: Op): string {
  if (!op.requestBody) return '';
  return Object.entries(op.requestBody.content)
    .map(
      ([type, { schema }]) =>
        `${type}${
          schema.$ref
            ? ` \`${String(schema.$ref).split('/').pop()}\``
            : ` (${Object.keys((schema.properties as Json) ?? {})
                .map((k) => `\`${k}\``)
                .join(', ')})`
        }`,
    )
    .join('; ');
}

/** The reference table: every operation of the document. */
export function apiReference(): string {
  const doc = openApiDocument() as { paths: Record<string, Record<string, Op>> };
  const rows: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = (op.parameters ?? [])
        .map(
          (p) =>
            `\`${p.name}\` (${p.in}${p.required ? ', required' : ''}${constraint(p.schema) ? `, ${constraint(p.schema)}` : ''})`,
        )
        .join('; ');
      const access = op.security?.length ? 'bearer' : op.responses['429'] ? 'limited' : 'operational';
      rows.push(
        `| ${method.toUpperCase()} | \`${path}\` | ${op.summary} | ${params} | ${bodyOf(op)} | ${Object.keys(op.responses).join(', ')} | ${access} |`,
      );
    }
  }
  return [
    '| Method | Path | What | Parameters | Body | Answers | Access |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** docs/api.md with the reference between its markers replaced. */
export function withApiReference(md: string): string {
  const a = md.indexOf(START);
  const b = md.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/api.md lacks the ${START} … ${END} markers`);
  return `${md.slice(0, a + START.length)}\n${apiReference()}\n${md.slice(b)}`;
}

if (require.main === module) {
  const file = join(__dirname, '..', 'docs', 'api.md');
  writeFileSync(file, withApiReference(readFileSync(file, 'utf8')));
  process.stdout.write(`updated the reference in ${file}\n`);
}
