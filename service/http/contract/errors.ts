import { z } from 'zod';

/**
 * The body of every error answer: a stable machine-readable `error` code and a sentence for
 * people; 400s name the `field`. Some errors add details (`issues`, `file`, `upstream_status`, …).
 */
export const errorSchema = z
  .looseObject({
    error: z
      .string()
      .meta({ description: 'Stable machine-readable code, e.g. bad_request, not_found, rate_limit_exceeded.' }),
    message: z.string().meta({ description: 'What went wrong and what to send instead.' }),
    field: z
      .string()
      .optional()
      .meta({ description: 'The input field at fault (dotted path; `body` for the body as a whole).' }),
  })
  .meta({
    id: 'Error',
    example: { error: 'bad_request', message: 'q is required: the words to search for', field: 'q' },
  });
export type ErrorBody = z.infer<typeof errorSchema>;

/** One problem with one field of one item (ingest, upload). */
export const itemIssueSchema = z.object({ field: z.string(), message: z.string() }).meta({ id: 'ItemIssue' });

/** 422 for an invalid item: the first bad field named, every issue listed. */
export const invalidItemSchema = errorSchema
  .extend({ issues: z.array(itemIssueSchema) })
  .meta({ id: 'InvalidItemError' });

/** The 429 body of spec §2.5: the tier that refused and when to retry. */
export const rateLimitedSchema = z
  .object({
    error: z.literal('rate_limit_exceeded'),
    message: z.string(),
    retry_after: z
      .int()
      .min(1)
      .meta({ description: 'Whole seconds until every tier admits again; equals the Retry-After header.' }),
  })
  .meta({
    id: 'RateLimited',
    example: {
      error: 'rate_limit_exceeded',
      message: 'Rate limit exceeded for the search tier (30 requests per 60 s, burst 10); retry in 2 s',
      retry_after: 2,
    },
  });
