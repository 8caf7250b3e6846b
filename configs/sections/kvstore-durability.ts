import type { KvstoreMode } from './kvstore-topology';

/**
 * When a content write is acknowledged (`KVSTORE_DURABILITY`), the same in every mode:
 *
 * - `primary`: the primary (the server, the Sentinel master, the slot's Cluster master) ran it;
 *   it is in that server's memory and reaches its disk by its own `appendfsync` policy (up to a
 *   second later with `everysec`). A crash of the host or a failover can lose it.
 * - `primary-disk`: and the primary's append-only file is fsynced with it (`WAITAOF 1 0`, Redis
 *   7.2 or later, `appendonly yes`). Survives a restart or a host crash of the primary; a
 *   failover to a replica that had not received it yet can lose it.
 * - `replica`: and at least one replica has it in memory (`WAIT 1`). Survives the failover that
 *   promotes that replica; needs a replica connected, or writes are refused (503).
 * - `replica-disk`: on the primary's disk and on at least one replica's disk (`WAITAOF 1 1`,
 *   Redis 7.2 or later, `appendonly yes` on both). Survives both.
 */
export type KvstoreDurability = 'primary' | 'primary-disk' | 'replica' | 'replica-disk';

/** Every accepted `KVSTORE_DURABILITY`, weakest first. */
export const KVSTORE_DURABILITIES: readonly KvstoreDurability[] = [
  'primary',
  'primary-disk',
  'replica',
  'replica-disk',
];

/**
 * The level when `KVSTORE_DURABILITY` is unset: `replica` in sentinel mode (a Sentinel setup has
 * replicas by definition, and a failover must not lose what was acknowledged), `primary`
 * otherwise (a standalone server or a Cluster may have no replica, and `*-disk` needs Redis 7.2
 * with `appendonly yes`, which a server started with defaults does not have). The stack's own
 * Redis (redis 7.2, `appendonly yes`) gets `primary-disk` from the charts.
 */
export function defaultDurability(mode: KvstoreMode): KvstoreDurability {
  return mode === 'sentinel' ? 'replica' : 'primary';
}

/** True for the levels that need `WAITAOF` (Redis 7.2 or later, `appendonly yes`). */
export function needsWaitaof(level: KvstoreDurability): boolean {
  return level === 'primary-disk' || level === 'replica-disk';
}
