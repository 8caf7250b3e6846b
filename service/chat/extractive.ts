import { Analyzer } from '../search/analysis/analyzer';
import { countedUsage } from './tokens';
import type { ChatProvider, Completion, CompletionChunk, CompletionRequest, Passage } from './types';

/** Options of `ExtractiveProvider`. */
export interface ExtractiveOptions {
  /** Most sentences quoted in one answer. @default 3 */
  readonly maxSentences?: number;
  readonly analyzer?: Analyzer;
}

/** The answer when nothing was retrieved. */
export const NO_ANSWER = "The site's content does not cover that yet. Try other words, or search for a related topic.";

interface Candidate {
  readonly text: string;
  readonly source: number;
  readonly position: number;
  readonly matched: number;
}

function sentences(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s+(?=[A-Z0-9"'(])/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * The embedded provider: no model, no network. It quotes the retrieved passages' sentences
 * that share the most terms with the question (at most one per source first, best sources
 * first), each followed by its citation `[n]`. Deterministic, so tests and offline use can rely
 * on it; token usage is counted with the tokenizer as if the prompt had gone to a model.
 */
export class ExtractiveProvider implements ChatProvider {
  readonly name = 'extractive';
  readonly model = 'extractive';
  private readonly analyzer: Analyzer;
  private readonly maxSentences: number;

  constructor(opts: ExtractiveOptions = {}) {
    this.analyzer = opts.analyzer ?? new Analyzer();
    this.maxSentences = opts.maxSentences ?? 3;
  }

  /** The answer text for a question and its passages. */
  compose(question: string, passages: readonly Passage[]): string {
    if (!passages.length) return NO_ANSWER;
    const wanted = new Set(this.analyzer.analyze(question));
    const candidates: Candidate[] = [];
    passages.forEach((p, source) => {
      sentences(p.text).forEach((text, position) => {
        const terms = new Set(this.analyzer.analyze(text));
        let matched = 0;
        for (const t of wanted) if (terms.has(t)) matched += 1;
        candidates.push({ text, source, position, matched });
      });
    });
    const ranked = candidates
      .filter((c) => c.matched > 0)
      .sort((a, b) => b.matched - a.matched || a.source - b.source || a.position - b.position);
    const chosen: Candidate[] = [];
    const usedSources = new Set<number>();
    for (const c of ranked) {
      if (chosen.length >= this.maxSentences) break;
      if (!usedSources.has(c.source)) {
        chosen.push(c);
        usedSources.add(c.source);
      }
    }
    for (const c of ranked) {
      if (chosen.length >= this.maxSentences) break;
      if (!chosen.includes(c)) chosen.push(c);
    }
    if (!chosen.length) {
      const first = candidates[0];
      if (!first) return `${passages[0].title} [1]`;
      chosen.push(first);
    }
    chosen.sort((a, b) => a.source - b.source || a.position - b.position);
    const lines = chosen.map((c) => `${c.text.replace(/[.!?]?$/, (m) => m || '.')} [${c.source + 1}]`);
    return `From the site's content:\n\n${lines.map((l) => `- ${l}`).join('\n')}`;
  }

  async complete(req: CompletionRequest): Promise<Completion> {
    const text = this.compose(req.question, req.passages);
    return { text, usage: countedUsage(req.messages, text), model: this.model };
  }

  async *stream(req: CompletionRequest): AsyncIterable<CompletionChunk> {
    const text = this.compose(req.question, req.passages);
    // Word by word (with the spaces), as a model would stream.
    for (const piece of text.match(/\S+\s*/g) ?? []) yield { kind: 'delta', text: piece };
    yield { kind: 'done', usage: countedUsage(req.messages, text), model: this.model };
  }
}
