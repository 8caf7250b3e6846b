import { z } from 'zod';

/**
 * The records of the operational endpoints (spec §4.1). Store states and modes are strings, not
 * enums, and the nested records allow more keys: other parts of the service add fields to them
 * (`content.compaction`, `content.writes`, a store's durability) without the contract refusing the answer.
 */
const tier = z.object({ limit: z.int(), window_seconds: z.int(), burst: z.int() });

/** A store's memory policy and evictions (service/kvstore/eviction-watch.ts). */
const eviction = z.looseObject({
  /** `maxmemory-policy` as last read, null when unknown. */
  policy: z.string().nullable(),
  /** `maxmemory` in bytes as last read (0: no limit), null when unknown. */
  maxmemory_bytes: z.int().min(0).nullable(),
  policy_risk: z.enum(['unchecked', 'none', 'accepted', 'evicts', 'unknown']),
  /** Keys the server evicted while this process watched (the rise of INFO stats `evicted_keys`). */
  evicted_keys: z.int().min(0),
  /** When the last rise was seen, ISO time, or null. */
  last_eviction_at: z.string().nullable(),
});

/** The eviction part of the health record (`kvstore_eviction`, `rate_limit_store_eviction`): the schema's output (service/kvstore/eviction-watch.ts builds it). */
export type EvictionStatus = z.output<typeof eviction>;

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
    /**
     * The content part: the store, the items served, and the losses of a shared store this
     * replica found and wrote back (an emptied Redis is a warning, not silence).
     */
    content: z
      .looseObject({
        store: z.string(),
        items: z.int().min(0),
        store_losses: z.object({ events: z.int(), items: z.int() }),
        /** The file store's background compaction (a failed one is retried, writes go on); absent for stores that do not compact. */
        compaction: z
          .looseObject({
            status: z.enum(['ok', 'failing']),
            /** Failed compactions since the process started. */
            failures: z.int(),
            last_failure_at: z.string().nullable(),
            /** Error code of the last failure (`ENOSPC`, `EACCES`, …). */
            last_error: z.string().nullable(),
            /** When the next attempt runs, while failing. */
            next_retry_at: z.string().nullable(),
          })
          .optional(),
        /**
         * Whether the file store takes writes; absent for other stores. `status` is `ok`,
         * `disk_full` (the last write found no space; ok again with the next success or once the
         * refused write would fit), `failing` (another error; ok with the next success) or
         * `read_only` (a failed write could not be undone: refused until a restart). Refused
         * writes answer 503 and store nothing.
         */
        writes: z
          .looseObject({
            status: z.enum(['ok', 'disk_full', 'failing', 'read_only']),
            /** Refused writes since the process started. */
            failures: z.int(),
            last_failure_at: z.string().nullable(),
            /** Error code of the last refused write (`ENOSPC`, `EIO`, …). */
            last_error: z.string().nullable(),
          })
          .optional(),
      })
      .optional(),
    /**
     * Search by meaning (issue 41): `off` (no embedder, no item with vectors), `ok`, `degraded`
     * (the embedder's last call or the last query's embedding failed, or the vector graph's worker
     * thread failed: searches answer by keyword and say so, or by exact scan), or `loading` (the
     * vector index is still read or built after a start: searches answer by keyword and say so);
     * `pending` items wait for their vectors, `items` have them.
     */
    semantic: z
      .looseObject({
        status: z.enum(['off', 'ok', 'degraded', 'loading']),
        pending: z.int().min(0),
        items: z.int().min(0),
      })
      .optional(),
    rate_limit: z.enum(['enabled', 'disabled', 'unknown']),
    rate_limit_backend: z.enum(['kvstore', 'memory']),
    health_score: z.number(),
    performance_grade: z.string(),
  })
  .meta({ id: 'Health' });

/** The health record of `/health` and `/api/health`: the schema's output (service/routes/ops.ts builds it). */
export type HealthRecord = z.output<typeof healthSchema>;
/** `semantic` of the health record (service/features.ts builds it). */
export type SemanticHealth = NonNullable<HealthRecord['semantic']>;
/** `content` of the health record (service/features.ts builds it). */
export type ContentHealth = NonNullable<HealthRecord['content']>;
/** `content.compaction` of the health record. */
export type CompactionHealth = NonNullable<ContentHealth['compaction']>;
/** `content.writes` of the health record. */
export type WritesHealth = NonNullable<ContentHealth['writes']>;

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
