import request from 'supertest';
import type { SettingsInput } from '../../../../configs';
import { buildTestApp, type TestApp } from '../../../helpers/app';
import { writeConfirmation } from '../../../helpers/write-confirmation';
import { waitFor } from '../../../../tools/harness/ports';
import { RedisSentinelSetup } from '../../../../tools/harness/redis-sentinel';
import { captureLogger } from '../../ratelimit/helpers';

const item = (id: string, body: string) => ({ id, type: 'article', title: id, body });

describe('Sentinel: the master killed under load (real redis-server, three sentinels)', () => {
  let setup: RedisSentinelSetup;
  let a: TestApp;
  let b: TestApp;
  const logs = captureLogger();
  beforeAll(async () => {
    setup = await RedisSentinelSetup.start({ password: 'sentinel-pass' });
    const input: SettingsInput = {
      service: { environment: 'production', apiToken: 'write-token' },
      kvstore: { ...setup.kvstoreSettings(), commandTimeoutMs: 1000 },
      // search: 20 at once, then 1 per hour, shared across both replicas while the kvstore holds;
      // writes (upload tier), the global and ip tiers generous, so the writers are never limited.
      rateLimit: {
        tiers: {
          global: { limit: 100_000, windowSeconds: 60, burst: 100_000 },
          ip: { limit: 100_000, windowSeconds: 60, burst: 100_000 },
          upload: { limit: 100_000, windowSeconds: 60, burst: 100_000 },
          search: { limit: 1, windowSeconds: 3600, burst: 20 },
        },
      },
    };
    a = await buildTestApp(input, { logger: logs.logger });
    b = await buildTestApp(input);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await setup?.stop();
  });

  it('no replica connected: writes are 503 "no replica to confirm", health names that cause, and the PING heartbeat never times out', async () => {
    const replica = setup.data.find((n) => n.port !== setup.data[0].port)!;
    const master = await setup.currentMaster();
    expect(replica.port).not.toBe(master.port);
    const states: string[] = [];
    const onDown = () => states.push(a.deps.kvstore.state);
    a.deps.kvstore.on('down', onDown);
    await replica.process.stop('SIGKILL');
    try {
      // Writers keep sending while no replica confirms: each write waits its WAIT out on the
      // write connection, never in front of the heartbeat PING on the shared one.
      const refused: request.Response[] = [];
      const until = Date.now() + 2500;
      await Promise.all(
        [0, 1, 2, 3].map(async (w) => {
          for (let i = 0; Date.now() < until; i++) {
            const r = await request(a.app)
              .post('/api/ingest')
              .set('Authorization', 'Bearer write-token')
              .send(item(`noreplica-${w}-${i}`, 'x'));
            if (r.status !== 201) refused.push(r);
          }
        }),
      );
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.every((r) => r.status === 503 && r.body.error === 'store_unavailable')).toBe(true);
      expect(refused.some((r) => /no replica to confirm the write/.test(r.body.message))).toBe(true);
      const health = (await request(a.app).get('/health')).body;
      expect(health).toMatchObject({ status: 'degraded', kvstore: 'connected', kvstore_writes: 'no_replica' });
      // The gauge says the same, a state set (every state present); the other pod wrote nothing: ok.
      expect(await writeConfirmation(a)).toEqual({ ok: 0, no_replica: 1, not_on_disk: 0 });
      expect(await writeConfirmation(b)).toEqual({ ok: 1, no_replica: 0, not_on_disk: 0 });
      expect(states).toEqual([]);
      expect(logs.at(40).some((l) => String(l.msg).includes('no replica to confirm content writes'))).toBe(true);
      expect(logs.at(40).some((l) => String(l.msg).includes('paused or overloaded'))).toBe(false);
    } finally {
      a.deps.kvstore.off('down', onDown);
      replica.process.start(['--replicaof', '127.0.0.1', String(master.port)]);
    }
    await waitFor(
      'writes confirmed again',
      async () => {
        const r = await request(a.app)
          .post('/api/ingest')
          .set('Authorization', 'Bearer write-token')
          .send(item('replica-back', 'x'));
        return r.status === 201;
      },
      { timeoutMs: 20_000 },
    );
    // Said by the next write, or by the probe (every 500 ms) when no write comes.
    await waitFor('health ok again', async () => (await request(a.app).get('/health')).body.kvstore_writes === 'ok', {
      timeoutMs: 5000,
    });
    expect((await request(a.app).get('/health')).body).toMatchObject({ status: 'ok', kvstore: 'connected' });
    expect(await writeConfirmation(a)).toEqual({ ok: 1, no_replica: 0, not_on_disk: 0 });
  }, 40_000);

  it('no acknowledged content is lost, reads never 5xx, limits hold with a bounded overshoot, and the service follows the new master', async () => {
    expect((await request(a.app).get('/health')).body).toMatchObject({
      kvstore: 'connected',
      kvstore_mode: 'sentinel',
    });
    const acknowledged: string[] = [];
    const statuses: number[] = [];
    const refusals: string[] = [];
    let stop = false;
    // Writers through both replicas, one write at a time each, until the failover is over.
    const writer = async (t: TestApp, name: string) => {
      for (let i = 0; !stop; i++) {
        const id = `${name}-${i}`;
        const r = await request(t.app)
          .post('/api/ingest')
          .set('Authorization', 'Bearer write-token')
          .send(item(id, `note ${id}`));
        statuses.push(r.status);
        if (r.status !== 201) refusals.push(`${r.status} ${String(r.body?.message).replace(/\d+/g, 'N')}`);
        if (r.status === 201) acknowledged.push(id);
        else await new Promise((res) => setTimeout(res, 50));
      }
    };
    const writers = [writer(a, 'a'), writer(b, 'b')];
    let promoted: Awaited<ReturnType<typeof setup.failover>>;
    try {
      await waitFor('some writes before the kill', () => acknowledged.length >= 10);
      promoted = await setup.failover();
      // Until a replica is back, writes cannot be confirmed by one (WAIT 1) and are refused with 503.
      const old = setup.data.find((n) => n !== promoted)!;
      await setup.restartAsReplica(old);
      const resumed = acknowledged.length;
      await waitFor('writes acknowledged by the new master', () => acknowledged.length > resumed + 5, {
        timeoutMs: 30_000,
      }).catch((e: Error) => {
        const last = [...new Set(refusals.slice(-20))];
        throw new Error(
          `${e.message}; last refusals: ${JSON.stringify(last)}; health: ${JSON.stringify({ a: a.deps.kvstore.state, aw: a.deps.kvstore.writes, b: b.deps.kvstore.state, bw: b.deps.kvstore.writes })}`,
        );
      });
    } finally {
      stop = true;
      await Promise.all(writers);
    }

    // Every acknowledged write is on the promoted master.
    const c = setup.dataClient(promoted.port);
    await c.connect();
    try {
      const held = await c.hkeys('svc-ai-search:content:items');
      expect(acknowledged.filter((id) => !held.includes(id))).toEqual([]);
    } finally {
      c.disconnect();
    }
    // Writes during the failover were refused with 503 (retry-safe), never a 500.
    expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    // Reads on both replicas.
    for (const t of [a, b]) expect((await request(t.app).get(`/api/v1/articles/${acknowledged[0]}`)).status).toBe(200);
    // Reconnected without a restart.
    await waitFor(
      'health connected on the new master',
      async () => (await request(a.app).get('/health')).body.kvstore === 'connected',
      { timeoutMs: 20_000 },
    );
    expect((await request(a.app).get('/api/rate-limit')).body.backend).toBe('kvstore');
    // Limits shared again after the failover: the ip bucket (20) holds across both replicas.
    const limited: number[] = [];
    for (let i = 0; i < 30; i++) limited.push((await request(i % 2 ? b.app : a.app).get('/api/v1/articles')).status);
    expect(limited.filter((s) => s === 200).length).toBeLessThanOrEqual(20);
    expect(limited.slice(-5)).toEqual([429, 429, 429, 429, 429]);
  }, 90_000);
});
