import type { TierPlan } from './tiers';
import type { Decision } from './types';

/** A reply of the decision script that is not `{now, then allowed and debts per request}`. */
export class UnexpectedReplyError extends Error {
  constructor(reply: unknown) {
    super(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
    this.name = 'UnexpectedReplyError';
  }
}

/**
 * Decides a request another way when its batch fails (the failover store's memory decision): the
 * request's promise then resolves with what it returns instead of rejecting.
 */
export type Recover = (err: unknown, plan: TierPlan, keys: readonly string[]) => Decision;

interface Waiter {
  readonly resolve: (d: Decision) => void;
  readonly reject: (err: unknown) => void;
  readonly keys: readonly string[];
  readonly recover: Recover | undefined;
}

/**
 * The requests of one tier plan waiting for one script call (see lua/script.ts): their distinct
 * keys (`KEYS`), the key references of each request (`ARGV[2...]`) and who waits for each answer.
 * Requests are decided in the order they were added.
 */
export class DecisionBatch {
  /** Distinct keys, in first-seen order. */
  private readonly keys: string[] = [];
  /** Key → its 1-based index in `keys` (Lua's). */
  private readonly index = new Map<string, number>();
  /** `tiers` KEYS indexes per request. */
  private readonly refs: number[] = [];
  private readonly waiters: Waiter[] = [];
  private done = false;

  constructor(readonly plan: TierPlan) {}

  /** True once answered or failed; a later reply or failure is ignored. */
  get settled(): boolean {
    return this.done;
  }

  /** Requests in the batch. */
  get size(): number {
    return this.waiters.length;
  }

  /** Adds a request: `keys` are its keys, one per tier of the plan, in the plan's order. */
  add(
    keys: readonly string[],
    resolve: (d: Decision) => void,
    reject: (err: unknown) => void,
    recover?: Recover,
  ): void {
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      let at = this.index.get(key);
      if (at === undefined) {
        at = this.keys.push(key);
        this.index.set(key, at);
      }
      this.refs.push(at);
    }
    this.waiters.push({ resolve, reject, keys, recover });
  }

  /**
   * The script call's arguments `[slot, numKeys, ...KEYS, now, ...refs]` (`slot` is where the
   * runner writes the script's reference). `now` is "" to let Redis read `TIME`.
   */
  args(now: string): (string | number)[] {
    const keys = this.keys;
    const refs = this.refs;
    const nk = keys.length;
    const args = new Array<string | number>(3 + nk + refs.length);
    args[0] = '';
    args[1] = nk;
    for (let i = 0; i < nk; i++) args[2 + i] = keys[i];
    args[2 + nk] = now;
    for (let i = 0; i < refs.length; i++) args[3 + nk + i] = refs[i];
    return args;
  }

  /** Hands each request its decision from the script's reply; a malformed reply fails them all. */
  settle(reply: unknown): void {
    if (this.done) return;
    let decisions: Decision[];
    try {
      decisions = parseBatchReply(reply, this.plan.tiers.length, this.waiters.length);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.done = true;
    for (let i = 0; i < decisions.length; i++) this.waiters[i].resolve(decisions[i]);
  }

  /** Fails every request of the batch with the command's error: each is recovered when it can be, else rejected. */
  fail(err: unknown): void {
    if (this.done) return;
    this.done = true;
    for (const w of this.waiters) {
      if (w.recover === undefined) {
        w.reject(err);
        continue;
      }
      try {
        w.resolve(w.recover(err, this.plan, w.keys));
      } catch (e) {
        w.reject(e);
      }
    }
  }
}

/** The decisions of `count` requests over `tiers` tiers from the script's reply. */
export function parseBatchReply(reply: unknown, tiers: number, count: number): Decision[] {
  if (!Array.isArray(reply) || reply.length !== 1 + count * (tiers + 1)) throw new UnexpectedReplyError(reply);
  for (const v of reply) if (typeof v !== 'number') throw new UnexpectedReplyError(reply);
  const values = reply as number[];
  const now = values[0];
  const decisions = new Array<Decision>(count);
  for (let j = 0, at = 1; j < count; j++, at += tiers + 1) {
    decisions[j] = { allowed: values[at] === 1, now, debts: values.slice(at + 1, at + 1 + tiers) };
  }
  return decisions;
}
