import type { ChatService } from '../chat/chat-service';
import type { ContentService } from '../content/content-service';
import type { FeatureDeps } from '../core-deps';
import type { SearchService } from '../search/search-service';

/**
 * What the endpoint groups share: the core dependencies (but the service metrics) and the three services. Built by the
 * composition root (`service/features.ts`); routers only read it.
 */
export interface FeatureContext {
  readonly deps: FeatureDeps;
  readonly content: ContentService;
  readonly search: SearchService;
  readonly chat: ChatService;
}
