import { Router } from 'express';
import {
  demoContentEnabled,
  readSynonymsFile,
  segmentPersistWindowMs,
  SHUTDOWN_CLOSE_RESERVE_SECONDS,
  SHUTDOWN_GRACE_EXTRA_SECONDS,
} from '../configs';
import { ChatService } from './chat/chat-service';
import { ExtractiveProvider } from './chat/extractive';
import { OpenAiProvider } from './chat/openai';
import type { ChatProvider } from './chat/types';
import { ContentService } from './content/content-service';
import { FileContentStore } from './content/file-store';
import { RedisContentStore } from './content/redis-store';
import {
  StoreUnavailableError,
  type CompactionStatus,
  type ContentStore,
  type WriteStatus,
} from './content/content-store';
import type { FeatureDeps } from './core-deps';
import type { CompactionHealth, ContentHealth, SemanticHealth, WritesHealth } from './http/contract/ops';
import { loadDemoContent } from './demo/demo-content';
import {
  registerContentMetrics,
  registerContentWriteMetrics,
  registerKvstoreWriteMetrics,
} from './metrics/content-metrics';
import type { CacheStats } from './metrics/service-metrics';
import { writeAccess } from './routes/auth';
import { chatRouter } from './routes/chat';
import type { FeatureContext } from './routes/context';
import { contentRouter } from './routes/content';
import { evalRouter } from './routes/eval';
import { exportRouter } from './routes/export';
import { ingestRouter } from './routes/ingest';
import { searchRouter } from './routes/search';
import { uploadRouter } from './routes/upload';
import { EmbeddedIndex, type EmbeddedIndexOptions } from './search/embedded-index';
import { rankingOptions } from './search/ranking';
import type { SearchIndex } from './search/search-index';
import { ResultCache } from './search/result-cache';
import { SearchService, type CachedSearch } from './search/search-service';
import { createSemanticSearch, NO_VECTORS } from './search/semantic-search';
import { createEmbedder, type VectorFeed } from './embeddings';
import { segmentDir, SegmentStore } from './search/index/segment-store';

/** The functional API (search, chat, ingest, upload, export, eval, content) as the app sees it. */
export interface Features {
  /** Mounted after the rate limiter; each route reads its own body (after auth for writes). */
  readonly router: Router;
  /** The search result cache, for the cache gauges. */
  readonly cache: CacheStats;
  /** The content part of the health record. @default absent (a stand-in without content) */
  contentHealth?(): ContentHealth;
  /** Search by meaning's part of the health record. @default absent */
  semanticHealth?(): SemanticHealth;
  /** Loads content and builds indexes; the service is ready after it resolves. */
  start(): Promise<void>;
  /**
   * Stops background work and closes stores; first persists what the search index appended since
   * its last segment, within what is left of the termination grace after SIGTERM
   * (`segmentPersistWindowMs`, from `Lifecycle.drainingSince`; from now when not draining).
   */
  close(): Promise<void>;
}

function compactionHealth(s: CompactionStatus): CompactionHealth {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    status: s.state,
    failures: s.failures,
    last_failure_at: iso(s.lastFailureAt),
    last_error: s.lastError ?? null,
    next_retry_at: iso(s.nextRetryAt),
  };
}

function writesHealth(s: WriteStatus): WritesHealth {
  return {
    status: s.state,
    failures: s.failures,
    last_failure_at: s.lastFailureAt === undefined ? null : new Date(s.lastFailureAt).toISOString(),
    last_error: s.lastError ?? null,
  };
}

/**
 * Persists the search index's appended part before the stores close, within the rest of the
 * termination grace, and logs what became of it (docs/search-segments.md, "A graceful stop").
 */
async function persistSegment(index: EmbeddedIndex, deps: FeatureDeps, logger: FeatureDeps['logger']): Promise<void> {
  const now = deps.clock.now();
  const budgetMs = Math.max(
    0,
    (deps.lifecycle.drainingSince ?? now) + segmentPersistWindowMs(deps.settings.service.shutdownTimeoutSeconds) - now,
  );
  try {
    const r = await index.persistBeforeExit(budgetMs);
    const info = { documents: r.documents, appended: r.appended, ms: r.ms, budgetMs };
    if (r.outcome === 'persisted') logger.info(info, 'search segment persisted before exit');
    else if (r.outcome === 'current')
      logger.info(info, 'search segment already covers the index: nothing to persist before exit');
    else if (r.outcome === 'timed-out') {
      logger.warn(
        info,
        `search segment not persisted before exit: the shutdown budget ran out (the termination grace, SHUTDOWN_TIMEOUT_SECONDS + ${SHUTDOWN_GRACE_EXTRA_SECONDS} s, less ${SHUTDOWN_CLOSE_RESERVE_SECONDS} s); the segment on disk is the last one written whole, and the next start re-indexes what it lacks (or rebuilds the index when more than half changed); a longer SHUTDOWN_TIMEOUT_SECONDS gives the stop more time`,
      );
    } else if (r.outcome === 'failed') {
      logger.warn(
        info,
        'search segment not persisted before exit: the write failed (see the warning above); the next start re-indexes what the segment on disk lacks',
      );
    }
  } catch (e) {
    logger.error(
      { err: (e as Error).message },
      'search segment not persisted before exit: the persist failed; the next start re-indexes what the segment on disk lacks',
    );
  }
}

/** Features plus their parts, for tests and benchmarks. */
export interface FeatureSet extends Features {
  readonly context: FeatureContext;
}

/** Replacements for tests and benchmarks. */
export interface FeaturesOptions {
  /** @default Redis when KVSTORE_URL is set, else the file store in DATA_DIR */
  readonly store?: ContentStore;
  /** @default from AI_PROVIDER */
  readonly provider?: ChatProvider;
  /** Ranking and snippet options of the embedded index, over those the settings give. @default `rankingOptions(settings.search)` (service/search/ranking.ts) */
  readonly index?: EmbeddedIndexOptions;
  /** The items' vectors for search by meaning. @default none yet (the content side provides them) */
  readonly vectorFeed?: VectorFeed;
}

/** The content store the settings ask for. */
export function createContentStore(deps: FeatureDeps): ContentStore {
  const logger = deps.logger.child({ component: 'content-store' });
  const { settings } = deps;
  if (settings.kvstore.url && deps.kvstore.client) {
    return new RedisContentStore({
      connection: deps.kvstore,
      logger,
      prefix: settings.kvstore.keyPrefix,
      durability: deps.kvstore.durability,
      durabilityWaitMs: Math.max(10, Math.floor(settings.kvstore.commandTimeoutMs * 0.8)),
      clock: deps.clock,
    });
  }
  return new FileContentStore({
    dir: settings.service.dataDir,
    logger,
    compactAfterBytes: settings.content.compactionBytes,
    clock: deps.clock,
  });
}

/** The chat provider the settings ask for. */
export function createProvider(deps: FeatureDeps, index: Pick<SearchIndex, 'analyzer'>): ChatProvider {
  const ai = deps.settings.ai;
  if (ai.provider === 'openai') {
    return new OpenAiProvider({
      baseUrl: ai.baseUrl,
      ...(ai.apiKey ? { apiKey: ai.apiKey } : {}),
      model: ai.model,
      timeoutMs: ai.timeoutMs,
      firstByteTimeoutMs: ai.firstByteTimeoutMs,
      maxEventBytes: ai.eventMaxBytes,
      maxRetries: ai.maxRetries,
      logger: deps.logger.child({ component: 'ai-provider' }),
    });
  }
  return new ExtractiveProvider({ analyzer: index.analyzer });
}

/**
 * Builds the functional API: store → in-memory copy → index + result cache → chat, and one router per
 * endpoint group. Does no I/O until `start()`, but for reading the synonyms file
 * (`SEARCH_SYNONYMS_FILE`): a bad one throws `SettingsError` here, so the service refuses to start.
 */
export function createFeatures(deps: FeatureDeps, opts: FeaturesOptions = {}): FeatureSet {
  const { settings, logger } = deps;
  const synonyms = readSynonymsFile(settings.search.synonymsFile);
  const store = opts.store ?? createContentStore(deps);
  if (store.compaction) {
    const compaction = store.compaction.bind(store);
    registerContentMetrics(deps.registry, compaction);
  }
  if (store.writes) registerContentWriteMetrics(deps.registry, store.writes.bind(store));
  // Only where content is in the kvstore: there a write can be refused for want of confirmation.
  if (store.kind === 'kvstore') registerKvstoreWriteMetrics(deps.registry, () => deps.kvstore.writes);
  const content = new ContentService(store, deps.clock, logger.child({ component: 'content' }));
  // The persisted index lives beside the file store's data (the default store) or in INDEX_DIR;
  // for a store handed in (tests, benchmarks) its folder is unknown, so INDEX_DIR only.
  const dir = segmentDir(settings.search.indexDir, settings.service.dataDir, opts.store ? 'memory' : store.kind);
  const segments = dir ? new SegmentStore({ dir, logger: logger.child({ component: 'search-segments' }) }) : undefined;
  const index = new EmbeddedIndex({ ...rankingOptions(settings.search), segments, synonyms, ...opts.index });
  const cache = new ResultCache<CachedSearch>({
    maxSize: settings.search.cacheMaxSize,
    ttlSeconds: settings.search.cacheTtlSeconds,
  });
  const embedder = createEmbedder(settings, { tokens: deps.stats, logger: logger.child({ component: 'embeddings' }) });
  const semantic = createSemanticSearch(settings, {
    feed: opts.vectorFeed ?? NO_VECTORS,
    embedder,
    dir,
    logger: logger.child({ component: 'search-vectors' }),
  });
  const search = new SearchService(index, content, cache, semantic);
  const chat = new ChatService({
    provider: opts.provider ?? createProvider(deps, index),
    index,
    content,
    stats: deps.stats,
    analyzer: index.analyzer,
    contextDocuments: settings.ai.contextDocuments,
    maxTokens: settings.ai.maxTokens,
    temperature: settings.ai.temperature,
    limits: { maxChars: settings.ai.answerMaxChars, totalMs: settings.ai.answerTimeoutMs },
  });
  const context: FeatureContext = { deps, content, search, chat };
  // Every group's routes on one router: a request walks one route list, not a router per group.
  const router = Router();
  for (const addRoutes of [
    searchRouter,
    contentRouter,
    ingestRouter,
    uploadRouter,
    exportRouter,
    evalRouter,
    chatRouter,
  ]) {
    addRoutes(context, router);
  }
  return {
    router,
    cache,
    context,
    contentHealth() {
      const losses = content.storeLosses;
      return {
        store: store.kind,
        items: content.size,
        store_losses: { events: losses.events, items: losses.items },
        ...(store.compaction ? { compaction: compactionHealth(store.compaction()) } : {}),
        ...(store.writes ? { writes: writesHealth(store.writes()) } : {}),
      };
    },
    semanticHealth() {
      return { status: semantic.index.status(), pending: semantic.index.pending(), items: semantic.index.size };
    },
    async start() {
      const access = writeAccess(settings);
      if (access === 'open') {
        logger.warn(
          `API_TOKEN is not set: ingest and upload are open to anyone (allowed in ${settings.service.environment} only); set API_TOKEN to require a bearer token`,
        );
      } else if (access === 'refused') {
        logger.warn(
          `API_TOKEN is not set: ingest and upload are refused in ${settings.service.environment}; set API_TOKEN to enable them`,
        );
      }
      if (settings.ai.provider === 'openai' && !settings.ai.apiKey) {
        logger.info(
          { baseUrl: settings.ai.baseUrl },
          'AI_API_KEY is not set: calling the AI provider without an Authorization header',
        );
      }
      // The persisted search segment is read while the content loads (the index wants both).
      segments?.prefetch();
      await content.start();
      await semantic.index.start();
      // Only an empty store gets the demo: a DATA_DIR or kvstore that holds content is never touched.
      // A store that cannot take writes now (a kvstore unreachable or refusing the password) skips
      // the demo with a warning: the service starts degraded, as it does without the demo, and
      // never exits for want of example content. The demo is not retried when the store returns.
      if (demoContentEnabled(settings.service) && content.size === 0) {
        try {
          const demo = await content.ingest(loadDemoContent());
          logger.info(
            { items: demo.length },
            'demo content loaded (README.md and docs/*.md); set DEMO_CONTENT=false to start empty',
          );
        } catch (e) {
          if (!(e instanceof StoreUnavailableError)) throw e;
          logger.warn(
            { err: e.message, store: store.kind },
            'demo content skipped: the content store cannot take writes now; starting without it (restart once the store is back to load it, or set DEMO_CONTENT=false)',
          );
        }
      }
      logger.info(
        {
          store: store.kind,
          items: content.size,
          engine: index.engine,
          provider: chat.providerName,
          index: index.startedFrom,
        },
        'content loaded and indexed',
      );
    },
    async close() {
      if (segments) await persistSegment(index, deps, segments.logger);
      await semantic.index.persist().catch((e: Error) => logger.warn({ err: e.message }, 'vector index not persisted'));
      semantic.index.close();
      await segments?.close();
      await store.close();
    },
  };
}
