/** Per-query scores of one ranking configuration (the same queries, in the same order, for every one). */
export interface ConfigScores {
  readonly name: string;
  /** One score per query (nDCG@10 here). */
  readonly scores: readonly number[];
}

/** One k-fold cross-validation of choosing a configuration. */
export interface CrossValidation {
  /** Mean over all queries of the score each got from the configuration chosen without it. */
  readonly heldOut: number;
  /** Mean over folds of the chosen configuration's mean score on the queries it was chosen on. */
  readonly training: number;
  /** The configuration chosen for each fold. */
  readonly chosen: readonly string[];
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** A deterministic pseudo-random sequence in [0, 1) (a 32-bit LCG): folds are the same on every run. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/**
 * k-fold cross-validation of picking the best of `configs` on nDCG: the queries are shuffled
 * (by `seed`) into k folds; for each fold the configuration with the best mean over the other
 * folds is chosen (ties: the first listed) and scored on the held-out fold only. The held-out
 * mean is what the tuning procedure can be expected to give on queries it never saw; the
 * training mean, always higher, is what it appears to give on the queries it was tuned on.
 */
export function crossValidate(configs: readonly ConfigScores[], k: number, seed: number): CrossValidation {
  const n = configs[0]?.scores.length ?? 0;
  if (!n || k < 2 || k > n) throw new Error(`crossValidate: need 2 ≤ k ≤ queries (k ${k}, queries ${n})`);
  if (configs.some((c) => c.scores.length !== n))
    throw new Error('crossValidate: every configuration must score the same queries');
  const next = lcg(seed);
  const order = [...Array(n).keys()].map((i) => ({ i, r: next() })).sort((a, b) => a.r - b.r);
  const fold = new Array<number>(n);
  order.forEach(({ i }, at) => (fold[i] = at % k));
  const held = new Array<number>(n);
  const training: number[] = [];
  const chosen: string[] = [];
  for (let f = 0; f < k; f++) {
    let best = -Infinity;
    let pick = configs[0];
    for (const c of configs) {
      let sum = 0;
      let count = 0;
      for (let i = 0; i < n; i++) {
        if (fold[i] === f) continue;
        sum += c.scores[i];
        count += 1;
      }
      if (sum / count > best) {
        best = sum / count;
        pick = c;
      }
    }
    training.push(best);
    chosen.push(pick.name);
    for (let i = 0; i < n; i++) if (fold[i] === f) held[i] = pick.scores[i];
  }
  return { heldOut: mean(held), training: mean(training), chosen };
}

/** `crossValidate` over `repeats` shuffles (seeds 1 … repeats): the mean, lowest and highest held-out means and the mean training one. */
export function repeatedCrossValidation(
  configs: readonly ConfigScores[],
  k: number,
  repeats: number,
): { heldOut: number; min: number; max: number; training: number } {
  const runs = Array.from({ length: repeats }, (_, s) => crossValidate(configs, k, s + 1));
  const held = runs.map((r) => r.heldOut);
  return {
    heldOut: mean(held),
    min: Math.min(...held),
    max: Math.max(...held),
    training: mean(runs.map((r) => r.training)),
  };
}
