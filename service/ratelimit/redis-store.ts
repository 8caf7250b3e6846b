import type Redis from 'ioredis';
import type { Clock } from '../clock';
import { decideScript } from './lua/script';
import type { TierPlan } from './tiers';
import type { Decision, DecisionStore } from './types';

/** A reply of the decision script that is not `{allowed, now, debt...}`. */
export class UnexpectedReplyError extends Error {
  constructor(reply: unknown) {
    super(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
    this.name = 'UnexpectedReplyError';
  }
}

/** Turns the script's reply into a decision. */
export function parseDecision(reply: unknown, tiers: number): Decision {
  if (!Array.isArray(reply) || reply.length !== tiers + 2) throw new UnexpectedReplyError(reply);
  for (const v of reply) if (typeof v !== 'number') throw new UnexpectedReplyError(reply);
  const values = reply as number[];
  return { allowed: values[0] === 1, now: values[1], debts: values.slice(2) };
}

/**
 * The kvstore store: every tier of a request in one `EVALSHA` (one round trip), decided and
 * written atomically by the Lua script, timed by Redis `TIME` so every replica reads one clock.
 * Errors (timeouts, a closed connection) reject; the failover store decides what then happens.
 */
export class RedisStore implements DecisionStore {
  /**
   * @param clock  Only for tests: sends the given clock's time instead of letting Redis read
   *   `TIME`, so decisions can be compared with the memory store step by step. Leave unset.
   */
  constructor(
    private readonly client: Redis,
    private readonly clock?: Clock,
  ) {}

  async decide(plan: TierPlan, keys: readonly string[]): Promise<Decision> {
    const n = keys.length;
    const extra = plan.scriptArgs;
    // [script, numKeys, ...keys, now, ...limits]: built once, handed to the runner without copies.
    const args = new Array<string | number>(3 + n + extra.length);
    args[0] = '';
    args[1] = n;
    for (let i = 0; i < n; i++) args[2 + i] = keys[i];
    args[2 + n] = this.clock ? String(this.clock.now()) : '';
    for (let i = 0; i < extra.length; i++) args[3 + n + i] = extra[i];
    return parseDecision(await decideScript.run(this.client, args), n);
  }

  /** One cheap round trip through the real path (script cache, `TIME`), writing nothing. */
  async probe(): Promise<void> {
    parseDecision(await decideScript.run(this.client, ['', 0, '']), 0);
  }
}
