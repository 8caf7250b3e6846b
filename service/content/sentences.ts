/**
 * An item's plain text cut into sentences and passages: the one cutter of the service. The chat
 * picks the best run of sentences for a question from it (chat/passages.ts); the embedder packs
 * all of them, in order, into the passages it embeds (embeddings/passages.ts).
 */

/** Longest passage, characters: what the chat quotes from one source, and what one vector covers. */
export const PASSAGE_CHARS = 800;

/** The sentences of `text`: split after `.`, `!` or `?` followed by space, and at line breaks; trimmed, none empty. */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `text` cut to at most `budget` characters at a word's end, with `…` when cut. */
export function cutAtWord(text: string, budget: number): string {
  return text.length > budget ? `${text.slice(0, budget - 1).replace(/\s+\S*$/, '')}…` : text;
}

/**
 * Consecutive sentences packed greedily into runs of at most `budget` characters (joined by a
 * space), in order, every sentence in exactly one run; a sentence longer than `budget` is split
 * at word ends into pieces of at most `budget` (at a hard cut where a word is longer). Stops after
 * `maxRuns` runs: the text past them is left out.
 */
export function packSentences(sents: readonly string[], budget: number, maxRuns = Infinity): string[] {
  const runs: string[] = [];
  let run = '';
  const flush = () => {
    if (run) runs.push(run);
    run = '';
  };
  for (const sentence of sents) {
    if (runs.length >= maxRuns) break;
    for (const piece of sentence.length > budget ? wordPieces(sentence, budget) : [sentence]) {
      if (run && run.length + 1 + piece.length > budget) flush();
      if (runs.length >= maxRuns) break;
      run = run ? `${run} ${piece}` : piece;
    }
  }
  if (runs.length < maxRuns) flush();
  return runs;
}

/** `text` in pieces of at most `budget` characters, cut at the last space of each when there is one in its second half. */
function wordPieces(text: string, budget: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > budget) {
    const space = rest.lastIndexOf(' ', budget);
    const cut = space > budget / 2 ? space : budget;
    pieces.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest) pieces.push(rest);
  return pieces;
}
