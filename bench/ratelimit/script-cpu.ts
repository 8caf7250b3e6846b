/**
 * Redis CPU per call of the decision script, A/B: `npx ts-node -T bench/ratelimit/script-cpu.ts
 * <baseline tree>` runs this tree's script for a three-tier plan, the baseline tree's and the
 * floor's (INCR + PEXPIRE) against one redis-server, one call at a time, in interleaved rounds,
 * and prints redis-server's CPU µs per call (its INFO `used_cpu_user` + `used_cpu_sys`, which
 * count only the server's own work, whatever else runs on the machine).
 */
import { join, resolve } from 'node:path';
import Redis from 'ioredis';
import { RedisServer } from '../../tools/harness/redis';

const CALLS = Number(process.env.SCRIPT_CALLS ?? 4000);
const ROUNDS = Number(process.env.SCRIPT_ROUNDS ?? 5);
const FLOOR =
  "local hits = redis.call('INCR', KEYS[1]) if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return hits";

type SourceOf = (limits: { limit: number; windowMs: number; burst: number; capacity: number }[]) => string;

async function cpuSeconds(admin: Redis): Promise<number> {
  const info = await admin.info('cpu');
  const get = (k: string) => Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? NaN);
  return get('used_cpu_user') + get('used_cpu_sys');
}

async function main(): Promise<void> {
  const base = resolve(process.argv[2] ?? '.');
  /* eslint-disable @typescript-eslint/no-require-imports */
  const ours = (require(join(__dirname, '../../service/ratelimit/lua/script')) as { decideSource: SourceOf })
    .decideSource;
  const theirs = (require(join(base, 'service/ratelimit/lua/script')) as { decideSource: SourceOf }).decideSource;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const tier = { limit: 100_000_000, windowMs: 60_000, burst: 100_000_000, capacity: 100_000_000 * 60_000 };
  const limits = [tier, tier, tier];
  const server = await RedisServer.start();
  const client = new Redis(server.url);
  const admin = new Redis(server.url);
  try {
    const scripts: [string, string, (i: number) => (string | number)[]][] = [
      [
        'this tree',
        ours(limits),
        (i) => [
          3,
          'ratelimit:global',
          `ratelimit:ip:10.0.0.${i % 100}`,
          `ratelimit:search:10.0.0.${i % 100}`,
          '',
          1,
          2,
          3,
        ],
      ],
      [
        'baseline',
        theirs(limits),
        (i) => [
          3,
          'ratelimit:global',
          `ratelimit:ip:10.0.0.${i % 100}`,
          `ratelimit:search:10.0.0.${i % 100}`,
          '',
          1,
          2,
          3,
        ],
      ],
      ['floor', FLOOR, (i) => [1, `floor:10.0.0.${i % 100}`, 60_000]],
    ];
    const shas = await Promise.all(scripts.map(([, src]) => client.script('LOAD', src) as Promise<string>));
    const per = new Map<string, number[]>(scripts.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (let j = 0; j < scripts.length; j++) {
        const k = (j + round) % scripts.length;
        const [name, , args] = scripts[k];
        const before = await cpuSeconds(admin);
        for (let i = 0; i < CALLS; i++) await client.evalsha(shas[k], ...(args(i) as [number, ...string[]]));
        const after = await cpuSeconds(admin);
        per.get(name)!.push(((after - before) * 1e6) / CALLS);
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const [name, xs] of per)
      process.stdout.write(
        `${name}: ${med(xs).toFixed(1)} µs Redis CPU per call (rounds: ${xs.map((x) => x.toFixed(1)).join(', ')})\n`,
      );
  } finally {
    client.disconnect();
    admin.disconnect();
    await server.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
