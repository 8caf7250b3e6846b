import { writeFileSync, appendFileSync, existsSync } from 'node:fs';

/** One replica of the service as the writers and readers see it (in-process app or child process). */
export interface ReplicaClient {
  readonly name: string;
  /** POST /api/ingest one item; status and the error message of a non-201. */
  ingest(id: string): Promise<{ status: number; message?: string }>;
  /** GET the item through this replica: the HTTP status. */
  read(id: string): Promise<number>;
  /** `/health` `content.store_losses.items`. */
  storeLossItems(): Promise<number>;
}

/** What one fault run measured (a row of the table in docs/failure-behaviour.md). */
export interface FaultRecord {
  readonly fault: string;
  readonly durability: string;
  readonly acknowledged: number;
  /** Acknowledged, but some replica does not serve it once caught up. Must be 0. */
  readonly notServed: number;
  /** Acknowledged, but not in Redis at the end. Must be 0 for the level's promise. */
  readonly lost: number;
  /** From the fault (or `from` marker) to the first 201 of a write sent after it, ms. */
  readonly firstGoodWriteMs: number | undefined;
  readonly firstGoodWriteFrom: string;
  /** From when the level could be met again (a replica back in sync) to the first good write, ms. */
  readonly firstGoodWriteAfterLevelMetMs?: number;
  /** The distinct 503 messages (numbers blanked), with counts. */
  readonly refusals: Record<string, number>;
  /** Refused with "nothing was stored", yet in Redis at the end (must be 0: the 503's promise held). */
  readonly nothingStoredButStored: number;
  /** Refused with "may or may not have been stored", and in Redis at the end (either is allowed). */
  readonly mayOrMayNotStored: string;
  /** Other statuses than 201/503 (must be none). */
  readonly otherStatuses: number[];
  /** Sum of `store_losses.items` over the replicas, and what was really lost. */
  readonly storeLosses: number;
  readonly storeLossesTruth: string;
  readonly storeLossesOk: boolean;
}

interface Ack {
  readonly id: string;
  readonly replica: string;
  readonly sentAt: number;
  readonly doneAt: number;
}

/**
 * Writers over the replicas: one sequential client and `concurrent` more, each sending unique ids
 * one after another, spread round-robin over the replicas. Records every answer.
 */
export class Writers {
  readonly acks: Ack[] = [];
  readonly refusals: Array<{ id: string; status: number; message: string; sentAt: number }> = [];
  private stopped = false;
  private readonly loops: Promise<void>[] = [];

  constructor(
    private readonly replicas: readonly ReplicaClient[],
    private readonly prefix: string,
    concurrent = 6,
  ) {
    for (let w = 0; w <= concurrent; w++) this.loops.push(this.loop(w));
  }

  private async loop(w: number): Promise<void> {
    for (let i = 0; !this.stopped; i++) {
      const replica = this.replicas[(w + i) % this.replicas.length];
      const id = `${this.prefix}-w${w}-${i}`;
      const sentAt = Date.now();
      let r: { status: number; message?: string };
      try {
        r = await replica.ingest(id);
      } catch (e) {
        // The replica itself is down (the service-kill fault): no answer is no acknowledgement.
        r = { status: 0, message: `no answer: ${(e as Error).message.replace(/\d+/g, 'N')}` };
      }
      if (r.status === 201) this.acks.push({ id, replica: replica.name, sentAt, doneAt: Date.now() });
      else {
        this.refusals.push({ id, status: r.status, message: r.message ?? '', sentAt });
        // A client backing off a little, as a real one would: refusals must not starve the box.
        await sleep(50);
      }
    }
  }

  /** Resolves once `n` more writes have been acknowledged (or `timeoutMs` passed). */
  async more(n: number, timeoutMs = 30_000): Promise<void> {
    const target = this.acks.length + n;
    const deadline = Date.now() + timeoutMs;
    while (this.acks.length < target && Date.now() < deadline) await sleep(20);
    if (this.acks.length < target) {
      const recent = refusalSummary(this.refusals.filter((r) => r.sentAt > Date.now() - timeoutMs));
      throw new Error(
        `only ${this.acks.length} of ${target} writes acknowledged in ${timeoutMs} ms; refusals meanwhile: ${JSON.stringify(recent)}`,
      );
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /** First 201 of a write sent at or after `t`, ms after `t`. */
  firstGoodAfter(t: number): number | undefined {
    const first = this.acks.filter((a) => a.sentAt >= t).sort((x, y) => x.doneAt - y.doneAt)[0];
    return first ? first.doneAt - t : undefined;
  }
}

/** Reads every acknowledged id through every replica until all are served (or `timeoutMs`); the ids some replica still misses. */
export async function notServedAnywhere(
  replicas: readonly ReplicaClient[],
  ids: readonly string[],
  timeoutMs = 10_000,
): Promise<string[]> {
  let missing = [...ids];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const still: string[] = [];
    for (const id of missing) {
      for (const r of replicas) {
        if ((await r.read(id)) !== 200) {
          still.push(id);
          break;
        }
      }
    }
    missing = still;
    if (!missing.length || Date.now() > deadline) return missing;
    await sleep(200);
  }
}

/** Distinct refusal messages with numbers blanked, counted. */
export function refusalSummary(refusals: ReadonlyArray<{ status: number; message: string }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of refusals) {
    const key = `${r.status} ${r.message.replace(/\d+(\.\d+)?/g, 'N').replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>')}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** Appends a record to `FAULT_REPORT` (a JSON-lines file) when set, for the docs table. */
export function report(record: FaultRecord): void {
  const file = process.env.FAULT_REPORT;
  if (!file) return;
  if (!existsSync(file)) writeFileSync(file, '');
  appendFileSync(file, `${JSON.stringify(record)}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
