import type { Logger } from 'pino';
import type { KvstoreConnection } from '../../kvstore/connection';
import { StoreUnavailableError, type VectorRecord, type VectorRecords } from '../content-store';
import { decodeVectorRecord, encodeVectorRecord } from '../vector-record';
import type { ContentKeys } from './redis-keys';
import { CONTENT_SCRIPTS, runScript, scriptKeys } from './redis-scripts';

const SCAN_COUNT = 200;

/**
 * The items' vectors in Redis (issue 41), beside the items: `<prefix>:vectors`, a hash of id →
 * record (vector-record.ts, binary). Written by the `writeVectors` script, only while the item is
 * at the version the vectors were computed from, with a change notice (`vectors`: the ids) in the
 * same atomic step; the content store's change reader hands such notices to `onRemoteVectors`. The
 * store's delete removes an item's record in its own atomic write (redis-scripts.ts). Claims are
 * keys `<prefix>:vclaim:<id>:<fingerprint>` set NX with a lease (PX).
 */
export class RedisVectorRecords implements VectorRecords {
  private listener: ((ids: readonly string[]) => void) | undefined;

  constructor(
    private readonly connection: KvstoreConnection,
    private readonly keys: ContentKeys,
    private readonly origin: string,
    private readonly streamMaxLen: number,
    private readonly logger: Logger,
  ) {}

  private client() {
    const c = this.connection.client;
    if (!c || !this.connection.available)
      throw new StoreUnavailableError(
        'the key-value store (KVSTORE_URL) is unreachable; vectors are not read or written',
      );
    return c;
  }

  private decode(buf: Buffer | null | undefined): VectorRecord | undefined {
    if (!buf) return undefined;
    const r = decodeVectorRecord(buf);
    if (!r) this.logger.warn('ignoring a vectors record that does not decode (it is embedded again)');
    return r;
  }

  async load(): Promise<VectorRecord[]> {
    const c = this.client();
    const out: VectorRecord[] = [];
    let cursor = '0';
    do {
      const [next, flat] = await c.hscanBuffer(this.keys.vectors, cursor, 'COUNT', SCAN_COUNT);
      for (let i = 1; i < flat.length; i += 2) {
        const r = this.decode(flat[i]);
        if (r) out.push(r);
      }
      cursor = next.toString();
    } while (cursor !== '0');
    return out;
  }

  async getMany(ids: readonly string[]): Promise<VectorRecord[]> {
    if (!ids.length) return [];
    const values = await this.client().hmgetBuffer(this.keys.vectors, ...ids);
    return values.map((v) => this.decode(v)).filter((r): r is VectorRecord => r !== undefined);
  }

  async write(
    records: ReadonlyArray<{ readonly record: VectorRecord; readonly updatedAt: string }>,
  ): Promise<string[]> {
    if (!records.length) return [];
    const args: Array<string | Buffer> = [String(this.streamMaxLen), this.origin];
    for (const { record, updatedAt } of records) args.push(record.id, updatedAt, encodeVectorRecord(record));
    const written = await runScript(this.client(), CONTENT_SCRIPTS.writeVectors, scriptKeys(this.keys), args);
    return Array.isArray(written) ? written.map(String) : [];
  }

  private claimKey(id: string, fingerprint: number): string {
    return `${this.keys.vectorClaims}:${id}:${fingerprint >>> 0}`;
  }

  async claim(id: string, fingerprint: number, leaseMs: number): Promise<boolean> {
    const set = await this.client().set(this.claimKey(id, fingerprint), this.origin, 'PX', leaseMs, 'NX');
    return set === 'OK';
  }

  async release(id: string, fingerprint: number): Promise<void> {
    const key = this.claimKey(id, fingerprint);
    const c = this.client();
    // Only our own claim: another replica's (after ours expired) stays.
    if ((await c.get(key)) === this.origin) await c.del(key);
  }

  onRemoteVectors(listener: (ids: readonly string[]) => void): void {
    this.listener = listener;
  }

  /** The content store's change reader found a `vectors` notice of another replica. */
  heard(ids: readonly string[]): void {
    this.listener?.(ids);
  }
}
