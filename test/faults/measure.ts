import Redis from 'ioredis';
import request from 'supertest';
import type { TestApp } from '../helpers/app';
import { notServedAnywhere, refusalSummary, report, Writers, type FaultRecord, type ReplicaClient } from './fault-run';

/**
 * One fault run of issue 26's proof (see acknowledged-writes.test.ts): writers over the replicas,
 * the fault, more writers, then every acknowledged id read through every replica and from Redis.
 */
export const ITEMS = 'svc-ai-search:content:items';
export const item = (id: string) => ({ id, type: 'article', title: id, body: `acknowledged note ${id}` });

export function inProcess(name: string, t: TestApp): ReplicaClient {
  return {
    name,
    async ingest(id) {
      const r = await request(t.app).post('/api/ingest').send(item(id));
      return { status: r.status, message: r.body?.message };
    },
    async read(id) {
      return (await request(t.app).get(`/api/v1/articles/${id}`)).status;
    },
    async storeLossItems() {
      return (await request(t.app).get('/health')).body.content.store_losses.items as number;
    },
  };
}

/** Runs writers, the fault, more writers; then reads everything back. */
export async function measure(opts: {
  fault: string;
  durability: string;
  replicas: readonly ReplicaClient[];
  prefix: string;
  /**
   * Injects the fault; resolves with the time writes are measured from and what it is, and, when
   * the level cannot be met at once (no replica until the old master is back), when it can.
   */
  inject: () => Promise<{ from: number; fromWhat: string; levelMetAt?: number }>;
  /** Every id Redis holds at the end. */
  stored: () => Promise<Set<string>>;
  /** What store_losses must say, from what the writers saw and the items Redis held before they began. */
  truth: (w: Writers, storedBefore: number) => { ok: (n: number) => boolean; text: string };
  before?: number;
  after?: number;
}): Promise<FaultRecord> {
  const storedBefore = (await opts.stored()).size;
  let lossesBefore = 0;
  for (const r of opts.replicas) lossesBefore += await r.storeLossItems();
  const writers = new Writers(opts.replicas, opts.prefix);
  let record: FaultRecord;
  try {
    await writers.more(opts.before ?? 30);
    const { from, fromWhat, levelMetAt } = await opts.inject();
    await writers.more(opts.after ?? 30);
    await writers.stop();
    const acked = writers.acks.map((a) => a.id);
    const missing = await notServedAnywhere(opts.replicas, acked);
    const stored = await opts.stored();
    const lost = acked.filter((id) => !stored.has(id));
    let losses = -lossesBefore;
    for (const r of opts.replicas) losses += await r.storeLossItems();
    const truth = opts.truth(writers, storedBefore);
    record = {
      fault: opts.fault,
      durability: opts.durability,
      acknowledged: acked.length,
      notServed: missing.length,
      lost: lost.length,
      firstGoodWriteMs: writers.firstGoodAfter(from),
      firstGoodWriteFrom: fromWhat,
      ...(levelMetAt !== undefined ? { firstGoodWriteAfterLevelMetMs: writers.firstGoodAfter(levelMetAt) } : {}),
      refusals: refusalSummary(writers.refusals.filter((r) => r.status !== 0)),
      nothingStoredButStored: writers.refusals.filter((r) => /nothing was stored/.test(r.message) && stored.has(r.id))
        .length,
      mayOrMayNotStored: (() => {
        const unsure = writers.refusals.filter((r) => /may or may not/.test(r.message));
        return `${unsure.filter((r) => stored.has(r.id)).length} of ${unsure.length}`;
      })(),
      otherStatuses: [...new Set(writers.refusals.map((r) => r.status).filter((s) => s !== 503 && s !== 0))],
      storeLosses: losses,
      storeLossesTruth: truth.text,
      storeLossesOk: truth.ok(losses),
    };
  } finally {
    await writers.stop();
  }
  report(record);
  return record;
}

export function expectPromiseHeld(r: FaultRecord): void {
  // The figures behind `storeLossesOk` are on both sides, so a failure's diff shows them.
  expect({
    fault: r.fault,
    storeLosses: r.storeLosses,
    storeLossesTruth: r.storeLossesTruth,
    mayOrMayNotStored: r.mayOrMayNotStored,
    notServed: r.notServed,
    lost: r.lost,
    nothingStoredButStored: r.nothingStoredButStored,
    otherStatuses: r.otherStatuses,
    storeLossesOk: r.storeLossesOk,
  }).toEqual({
    fault: r.fault,
    storeLosses: r.storeLosses,
    storeLossesTruth: r.storeLossesTruth,
    mayOrMayNotStored: r.mayOrMayNotStored,
    notServed: 0,
    lost: 0,
    nothingStoredButStored: 0,
    otherStatuses: [],
    storeLossesOk: true,
  });
  // Every refusal says whether the write may have been stored.
  for (const message of Object.keys(r.refusals))
    expect(message).toMatch(/^503 .*(nothing was stored|may or may not have been stored)/);
}

export const zero = () => ({ ok: (n: number) => n === 0, text: '0' });

export async function hkeys(url: string): Promise<Set<string>> {
  const c = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return new Set(await c.hkeys(ITEMS));
  } finally {
    c.disconnect();
  }
}
