import { admits, msUntilAdmitted, msUntilFull, remaining } from './gcra';
import type { TierPlan } from './tiers';
import type { Decision } from './types';

/** What a decision means for the client, per tier and overall. */
export interface Verdict {
  readonly allowed: boolean;
  /** Requests each tier would admit right now (after this request when admitted). */
  readonly remaining: readonly number[];
  /** Milliseconds until each tier's bucket is full again. */
  readonly msUntilFull: readonly number[];
  /** Per tier: did this tier admit the request? (All do when `allowed`.) */
  readonly admitted: readonly boolean[];
  /**
   * The tier the `X-RateLimit-*` headers describe: the most constrained one, with the fewest
   * requests left (ties: the later full-again time, then the more specific tier). On a refusal it
   * is the refusing tier with the longest wait, the one named in the 429 body.
   */
  readonly shown: number;
  /** Whole seconds until every tier admits one request; at least 1. Only meaningful when refused. */
  readonly retryAfterSeconds: number;
}

/** Derives the per-tier figures and the tier to show from a store's decision. */
export function verdictOf(plan: TierPlan, d: Decision): Verdict {
  const n = plan.tiers.length;
  const left = new Array<number>(n);
  const full = new Array<number>(n);
  const admitted = new Array<boolean>(n);
  let shown = -1;
  let waitMs = 0;
  for (let i = 0; i < n; i++) {
    const g = plan.tiers[i].gcra;
    const debt = d.debts[i];
    left[i] = remaining(debt, g);
    full[i] = msUntilFull(debt, g);
    admitted[i] = d.allowed || admits(debt, g);
    if (!d.allowed) {
      if (admitted[i]) continue;
      // Refused: show the refusing tier that makes the client wait longest (>= keeps the later, more specific one).
      const wait = msUntilAdmitted(debt, g);
      if (shown < 0 || wait >= waitMs) {
        shown = i;
        waitMs = wait;
      }
    } else if (shown < 0 || left[i] < left[shown] || (left[i] === left[shown] && full[i] >= full[shown])) {
      shown = i;
    }
  }
  // A refusal always has a refusing tier; guard against a store that says otherwise.
  if (shown < 0) shown = n - 1;
  return {
    allowed: d.allowed,
    remaining: left,
    msUntilFull: full,
    admitted,
    shown,
    retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
  };
}
