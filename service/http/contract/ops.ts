import { z } from 'zod';

/**
 * The records of the operational endpoints (spec §4.1). Store states and modes are strings, not
 * enums, and the nested records allow more keys: other parts of the service add fields to them
 * (`content.compaction`, `content.writes`, a store's durability) without the contract refusing the answer.
 */
const tier = z.object({ limit: z.int(), window_seconds: z.int(), burst: z.int() });

/** A store's memory policy and evictions (service/kvstore/eviction-watch.ts). */
const eviction = z.looseObject({
  policy: z.string().nullable(),
  maxmemory_bytes: z.int().min(0).nullable(),
  policy_risk: z.enum(['unchecked', 'none', 'accepted', 'evicts', 'unknown']),
  evicted_keys: z.int().min(0),
  last_eviction_at: z.string().nullable(),
});

/** `GET /health` and `/api/health`. */
export const healthSchema = z
  .looseObject({
    status: z.enum(['ok', 'degraded', 'draining']),
    service: z.string(),
    version: z.string(),
    environment: z.string(),
    uptime_seconds: z.int().min(0),
    timestamp: z.iso.datetime(),
    kvstore: z.string(),
    kvstore_mode: z.string(),
    kvstore_eviction: eviction.optional(),
    rate_limit_store: z.string().optional(),
    rate_limit_store_mode: z.string().optional(),
    rate_limit_store_eviction: eviction.optional(),
    content: z
      .looseObject({
        store: z.string(),
        items: z.int().min(0),
        store_losses: z.object({ events: z.int(), items: z.int() }),
        compaction: z
          .looseObject({
            status: z.enum(['ok', 'failing']),
            failures: z.int(),
            last_failure_at: z.string().nullable(),
            last_error: z.string().nullable(),
            next_retry_at: z.string().nullable(),
          })
          .optional(),
        writes: z
          .looseObject({
            status: z.enum(['ok', 'disk_full', 'failing', 'read_only']),
            failures: z.int(),
            last_failure_at: z.string().nullable(),
            last_error: z.string().nullable(),
          })
          .optional(),
      })
      .optional(),
    rate_limit: z.enum(['enabled', 'disabled', 'unknown']),
    rate_limit_backend: z.enum(['kvstore', 'memory']),
    health_score: z.number(),
    performance_grade: z.string(),
  })
  .meta({ id: 'Health' });

/** `GET /health/live`. */
export const liveSchema = z.object({ status: z.literal('alive') }).meta({ id: 'Live' });

/** `GET /health/ready`: 200 ready, 503 starting or draining. */
export const readySchema = z
  .object({ status: z.enum(['ready', 'not_ready']), state: z.string(), kvstore: z.string(), kvstore_mode: z.string() })
  .meta({ id: 'Ready' });

/** `GET /metrics`: the JSON metrics record. */
export const metricsSchema = z
  .looseObject({
    requests: z.object({
      total: z.int(),
      successful: z.int(),
      failed: z.int(),
      success_rate: z.number(),
      avg_response_time_ms: z.number(),
      window_seconds: z.number(),
    }),
    total_tokens_used: z.number(),
    /** The part of `total_tokens_used` estimated with the tokenizer (the provider reported no usable usage). */
    tokens_estimated: z.number(),
    health_score: z.number(),
    performance_grade: z.string(),
    cache: z.object({ size: z.int(), maxsize: z.int(), usage_percent: z.number() }),
    requests_by_type: z.record(z.string(), z.object({ total: z.int(), avg_time_ms: z.number() })),
    uptime_seconds: z.int(),
  })
  .meta({ id: 'Metrics' });

/** `GET /api/rate-limit`: the rate-limit record of spec §2.2. */
export const rateLimitRecordSchema = z
  .looseObject({
    rate_limits: z.object({ global: tier, ip: tier, search: tier, upload: tier }),
    backend: z.enum(['kvstore', 'memory']),
    client_ip: z.string(),
    environment: z.string(),
    alert_threshold: z.number(),
    log_warnings: z.boolean(),
    log_all: z.boolean(),
    warnings: z.array(z.unknown()),
  })
  .meta({ id: 'RateLimitRecord' });
