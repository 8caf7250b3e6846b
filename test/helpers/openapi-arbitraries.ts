import fc from 'fast-check';
import { openApiDocument } from '../../service/http/contract/openapi';

/**
 * Request values generated from the served OpenAPI document (not from the zod schemas it is
 * generated from), for the property tests of test/service/http/contract/: `valid` values of a
 * schema (the JSON Schema subset the contract uses), and values `invalid` refuses.
 */
export type Json = Record<string, unknown>;

export const doc = openApiDocument() as {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json> };
};

/** `s`, with a `$ref` to a component followed. */
export const resolve = (s: Json): Json =>
  typeof s.$ref === 'string' ? resolve(doc.components.schemas[s.$ref.split('/').pop()!]) : s;

/** Valid values of a JSON Schema (the subset the contract uses); arrays and strings kept short. */
export function valid(schema: Json): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if (Array.isArray(s.anyOf)) return fc.oneof(...(s.anyOf as Json[]).map(valid));
  switch (s.type) {
    case 'integer':
      return fc.integer({ min: Number(s.minimum ?? 0), max: Math.min(Number(s.maximum ?? 1000), 1_000_000) });
    case 'number':
      return fc.integer({ min: Number(s.minimum ?? 0), max: Number(s.maximum ?? 100) });
    case 'boolean':
      return fc.boolean();
    case 'string': {
      // A string whose checks JSON Schema cannot carry (a URL, a date) is described by its examples.
      if (Array.isArray(s.examples) && s.examples.length) return fc.constantFrom(...(s.examples as string[]));
      const min = Number(s.minLength ?? 0);
      const max = Math.min(Number(s.maxLength ?? 40), 60);
      if (s.pattern)
        return fc
          .stringMatching(new RegExp(String(s.pattern)))
          .filter((v) => v.length <= max && v.length >= Math.max(min, 1));
      // Words: the schemas trim, so blank strings are not what they accept.
      return fc
        .string({
          unit: fc.constantFrom(...'abcdefghij klmnop'),
          minLength: Math.max(min, 1),
          maxLength: Math.max(max, 1),
        })
        .filter((v) => v.trim().length >= Math.max(min, 1));
    }
    case 'array':
      return fc.array(valid(s.items as Json), {
        minLength: Number(s.minItems ?? 0),
        maxLength: Math.min(Number(s.maxItems ?? 3), 3),
      });
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Json>;
      if (!Object.keys(props).length && s.additionalProperties && typeof s.additionalProperties === 'object') {
        return fc.dictionary(
          valid((s.propertyNames ?? { type: 'string', minLength: 1 }) as Json) as fc.Arbitrary<string>,
          valid(s.additionalProperties as Json),
          { maxKeys: 3 },
        );
      }
      const required = new Set((s.required ?? []) as string[]);
      const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, valid(v)])), {
        requiredKeys: [...required],
      });
      // "At least one of" (a batch's operations, a filter's fields).
      const least = Number(s.minProperties ?? 0);
      return least ? record.filter((v) => Object.keys(v).length >= least) : record;
    }
    default:
      return fc.constant(undefined);
  }
}

/** Values `schema` refuses (none when there is none worth sending). */
export function invalid(schema: Json): unknown[] {
  const s = resolve(schema);
  if (Array.isArray(s.enum)) return ['no-such-value', 7];
  switch (s.type) {
    case 'integer':
      return [
        ...(s.maximum !== undefined ? [Number(s.maximum) + 1] : []),
        ...(s.minimum !== undefined ? [Number(s.minimum) - 1] : []),
        'abc',
        1.5,
      ];
    case 'string':
      return [...(s.maxLength !== undefined ? ['x'.repeat(Number(s.maxLength) + 1)] : []), 12];
    case 'array':
      return ['not-an-array'];
    default:
      return [];
  }
}
