/**
 * The search libraries a user would pick instead of the service's index, behind one interface so
 * the benchmark runs them side by side on the same corpus and queries: MiniSearch with the
 * service's analyzer (Porter2 stemming, English stopwords), wink-bm25-text-search with its own
 * stemming prep tasks, and FlexSearch with its defaults. Each is configured the way its README
 * suggests for English text; none gets the service's RM3 or field boosts.
 */
import { Index as FlexIndex } from 'flexsearch';
import MiniSearch from 'minisearch';
import { Analyzer } from '../../service/search/analysis/analyzer';
import type { CorpusItem } from '../../tools/corpus/grow-corpus';

/** One engine under test: built once over a corpus, then asked for the top k ids of a query. */
export interface SearchEngine {
  readonly name: string;
  /** Indexes `items` (title and body). */
  build(items: readonly CorpusItem[]): Promise<void>;
  /** Best `k` ids for `text`, best first; `short` queries may use prefix and fuzzy matching. */
  search(text: string, k: number, short: boolean): Promise<string[]>;
}

/** The part of wink-bm25-text-search used here (it ships no types). */
interface WinkBm25 {
  defineConfig(config: { fldWeights: Record<string, number> }): void;
  definePrepTasks(tasks: ReadonlyArray<(x: unknown) => unknown>): void;
  addDoc(doc: Record<string, string>, id: string): void;
  consolidate(): void;
  search(text: string, limit: number): Array<[string, number]>;
}
interface WinkNlpUtils {
  string: {
    lowerCase: (s: unknown) => unknown;
    removeExtraSpaces: (s: unknown) => unknown;
    tokenize0: (s: unknown) => unknown;
  };
  tokens: {
    removeWords: (t: unknown) => unknown;
    stem: (t: unknown) => unknown;
    propagateNegations: (t: unknown) => unknown;
  };
}

/** MiniSearch over title and body with Porter2 stemming and stopwords; prefix and fuzzy for short queries. */
export function miniSearchEngine(): SearchEngine {
  const analyzer = new Analyzer();
  let mini: MiniSearch<CorpusItem> | undefined;
  return {
    name: 'MiniSearch + stemming',
    async build(items) {
      mini = new MiniSearch<CorpusItem>({
        fields: ['title', 'body'],
        tokenize: (text) => analyzer.analyze(text),
        processTerm: (t) => t,
      });
      mini.addAll(items);
    },
    async search(text, k, short) {
      const hits = mini!.search(text, short ? { prefix: true, fuzzy: 0.2 } : {});
      return hits.slice(0, k).map((h) => String(h.id));
    },
  };
}

/** wink-bm25-text-search with the prep tasks of its README (lower case, tokenize, stopwords, stem). */
export function winkEngine(): SearchEngine {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const bm25 = require('wink-bm25-text-search') as () => WinkBm25;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const nlp = require('wink-nlp-utils') as WinkNlpUtils;
  let engine: WinkBm25 | undefined;
  return {
    name: 'wink-bm25-text-search (stemmed)',
    async build(items) {
      engine = bm25();
      engine.defineConfig({ fldWeights: { title: 1, body: 1 } });
      engine.definePrepTasks([
        nlp.string.lowerCase,
        nlp.string.removeExtraSpaces,
        nlp.string.tokenize0,
        nlp.tokens.propagateNegations,
        nlp.tokens.removeWords,
        nlp.tokens.stem,
      ]);
      for (const item of items) engine.addDoc({ title: item.title, body: item.body }, item.id);
      engine.consolidate();
    },
    async search(text, k) {
      return engine!.search(text, k).map(([id]) => id);
    },
  };
}

/** FlexSearch's `Index` with its defaults; `suggest` so a multi-word query is not an AND of every word. */
export function flexSearchEngine(): SearchEngine {
  let index: FlexIndex | undefined;
  let ids: string[] = [];
  return {
    name: 'FlexSearch',
    async build(items) {
      index = new FlexIndex();
      ids = items.map((i) => i.id);
      items.forEach((item, n) => index!.add(n, `${item.title}\n${item.body}`));
    },
    async search(text, k) {
      const found = index!.search(text, { limit: k, suggest: true }) as unknown as number[];
      return found.map((n) => ids[n]);
    },
  };
}
