import { EventEmitter } from 'node:events';
import { ManualClock } from '../../helpers/manual-clock';
import type { KvstoreState } from '../../../service/kvstore/connection';
import type { Recover } from '../../../service/ratelimit/decision-batch';
import { FailoverDecisionStore, type SharedDecisionStore } from '../../../service/ratelimit/failover-decision-store';
import { MemoryDecisionStore } from '../../../service/ratelimit/memory-decision-store';
import type { TierPlan } from '../../../service/ratelimit/tiers';
import type { Decision, LocalDecisionStore } from '../../../service/ratelimit/types';
import { captureLogger, planFor, until, WIDE } from './helpers';

/** The connection's observable behaviour: a state and `up`/`down` events on transitions. */
class FakeConnection extends EventEmitter {
  state: KvstoreState = 'connecting';
  get available() {
    return this.state === 'connected';
  }
  go(next: KvstoreState) {
    this.state = next;
    if (next === 'connected') this.emit('up');
    if (next === 'disconnected') this.emit('down');
  }
}

/** A shared store that answers a fixed decision, or fails while `failing`. */
class FakeShared implements SharedDecisionStore {
  calls = 0;
  probes = 0;
  failing = false;
  /** When set, every call fails with this one error, as the requests of one failed batch do. */
  batchError: Error | undefined;
  readonly answer: Decision = { allowed: true, now: 42, debts: [1, 1] };
  /** Like the RedisDecisionStore: a failed command resolves with `recover`'s decision when one is given. */
  async decide(plan: TierPlan, keys: readonly string[], recover?: Recover): Promise<Decision> {
    this.calls++;
    const err = this.batchError ?? (this.failing ? new Error('Command timed out') : undefined);
    if (err === undefined) return this.answer;
    if (recover === undefined) throw err;
    return recover(err, plan, keys);
  }
  async probe(): Promise<void> {
    this.probes++;
    if (this.failing) throw new Error('Command timed out');
  }
}

const plan = planFor({ global: WIDE, ip: WIDE });
const keys = plan.keys('192.0.2.1');

function setup(opts: { shared?: boolean } = {}) {
  const conn = new FakeConnection();
  const shared = new FakeShared();
  const clock = new ManualClock();
  const memory = new MemoryDecisionStore(clock, 100);
  const log = captureLogger();
  const errors: unknown[] = [];
  const store = new FailoverDecisionStore(conn, opts.shared === false ? undefined : shared, memory, log.logger, clock, {
    probeIntervalMs: 10,
    onStoreError: (e) => errors.push(e),
  });
  const warnings = () => log.at(40).map((l) => l.msg);
  return { conn, shared, clock, memory, log, errors, store, warnings };
}

describe('FailoverDecisionStore', () => {
  it('uses memory, silently, when no kvstore is configured', async () => {
    const { store, conn, warnings, memory } = setup({ shared: false });
    conn.go('disconnected');
    expect(store.backend()).toBe('memory');
    await store.decide(plan, keys);
    expect(memory.size).toBe(2);
    expect(warnings()).toEqual([]);
  });

  it('uses memory without a warning while the first connection attempt runs, then the kvstore', async () => {
    const { store, conn, shared, warnings } = setup();
    expect(store.backend()).toBe('memory');
    await store.decide(plan, keys);
    expect(shared.calls).toBe(0);
    conn.go('connected');
    expect(store.backend()).toBe('kvstore');
    expect(await store.decide(plan, keys)).toBe(shared.answer);
    expect(warnings()).toEqual([]);
  });

  it('warns once when the kvstore is unreachable at startup, and once when it returns', async () => {
    const { store, conn, shared, warnings } = setup();
    conn.go('disconnected');
    for (let i = 0; i < 50; i++) await store.decide(plan, keys);
    expect(shared.calls).toBe(0);
    expect(warnings()).toEqual([expect.stringContaining('falls back to the in-memory store')]);
    conn.go('connected');
    expect(store.backend()).toBe('kvstore');
    expect(warnings()).toEqual([expect.stringContaining('falls back'), 'rate limiting is back on the kvstore']);
  });

  it('a lost connection switches to memory at once; one warning however many requests', async () => {
    const { store, conn, shared, warnings, clock, log } = setup();
    conn.go('connected');
    await store.decide(plan, keys);
    conn.go('disconnected');
    expect(store.backend()).toBe('memory');
    for (let i = 0; i < 100; i++) await store.decide(plan, keys);
    expect(shared.calls).toBe(1);
    expect(warnings()).toHaveLength(1);
    clock.advance(5000);
    conn.go('connected');
    expect(log.at(40)[1]).toMatchObject({ msg: 'rate limiting is back on the kvstore', outage_ms: 5000 });
  });

  it('a failing command is answered from memory, later requests skip the kvstore, a probe brings it back', async () => {
    const { store, conn, shared, warnings, errors, memory } = setup();
    conn.go('connected');
    shared.failing = true;
    const d = await store.decide(plan, keys);
    // Decided by memory: its clock, its state.
    expect(d.now).not.toBe(42);
    expect(memory.size).toBe(2);
    expect(store.backend()).toBe('memory');
    for (let i = 0; i < 20; i++) await store.decide(plan, keys);
    expect(shared.calls).toBe(1);
    expect(errors).toHaveLength(1);
    expect(warnings()).toEqual([expect.stringContaining('falls back')]);
    // Probes keep failing while the kvstore does: still memory, each failure counted, no new warning.
    await until('a few failed probes', () => shared.probes >= 3);
    expect(store.backend()).toBe('memory');
    expect(errors.length).toBeGreaterThanOrEqual(3);
    shared.failing = false;
    await until('the kvstore back', () => store.backend() === 'kvstore');
    expect(await store.decide(plan, keys)).toBe(shared.answer);
    expect(warnings()).toEqual([expect.stringContaining('falls back'), 'rate limiting is back on the kvstore']);
    store.close();
  });

  it('a failed batch: each of its requests is decided by memory in order, the failed command counts once', async () => {
    const { store, conn, shared, errors, warnings, log } = setup();
    const tight = planFor({ global: WIDE, ip: { limit: 1, windowSeconds: 3600, burst: 3 } });
    conn.go('connected');
    // Ten requests of one turn, all rejected with the one error of their shared command.
    shared.batchError = new Error('Command timed out');
    const decided = await Promise.all(Array.from({ length: 10 }, () => store.decide(tight, tight.keys('192.0.2.9'))));
    expect(decided.map((d) => d.allowed)).toEqual([true, true, true, false, false, false, false, false, false, false]);
    expect(errors).toEqual([shared.batchError]);
    expect(log.at(20).filter((l) => l.msg === 'rate-limit kvstore command failed')).toHaveLength(1);
    expect(warnings()).toEqual([expect.stringContaining('falls back')]);
    // Back, then another failed command: counted again.
    shared.batchError = undefined;
    await until('the kvstore back', () => store.backend() === 'kvstore');
    shared.batchError = new Error('READONLY');
    await Promise.all([store.decide(plan, keys), store.decide(plan, keys)]);
    expect(errors).toHaveLength(2);
    store.close();
  });

  it('falls back to any LocalDecisionStore (the interface, not the memory store): at once, and inside a failed batch', async () => {
    const conn = new FakeConnection();
    const shared = new FakeShared();
    const local: Decision = { allowed: false, now: 7, debts: [3, 3] };
    const fallback: LocalDecisionStore = { decideAtOnce: () => local, decide: () => Promise.resolve(local) };
    const store = new FailoverDecisionStore(conn, shared, fallback, captureLogger().logger, new ManualClock(), {
      probeIntervalMs: 10,
    });
    expect(store.decideAtOnce(plan, keys)).toBe(local);
    conn.go('connected');
    expect(store.decideAtOnce(plan, keys)).toBeUndefined();
    shared.failing = true;
    expect(await store.decide(plan, keys)).toBe(local);
    store.close();
  });

  it('close() stops probing and listening', async () => {
    const { store, conn, shared } = setup();
    conn.go('connected');
    shared.failing = true;
    await store.decide(plan, keys);
    store.close();
    const probes = shared.probes;
    await new Promise((r) => setTimeout(r, 60));
    expect(shared.probes).toBe(probes);
    expect(conn.listenerCount('up') + conn.listenerCount('down')).toBe(0);
  });
});
