import net from 'node:net';
import Redis from 'ioredis';

/**
 * The commands clients sent to the Redis at `redisUrl` while `fn` ran, upper-case names in the
 * order Redis ran them; those a Lua script runs are left out. MONITOR sees them between an ECHO
 * sent before `fn` and one sent after it has settled, on a connection of their own: by then every
 * command `fn` waited for has run, so the count holds those and nothing else.
 *
 * MONITOR is read from a plain socket, not through ioredis's `monitor()`: ioredis marks its
 * connection as monitoring only in a promise callback after MONITOR's `+OK`, so a monitor line that
 * arrives in the same read as that `+OK` (another client's INFO ready check, say) is taken for the
 * reply to a command never sent, and ioredis throws "Command queue state error".
 */
export async function clientCommandsDuring(redisUrl: string, fn: () => Promise<void>): Promise<string[]> {
  const monitor = await monitorLines(redisUrl);
  const marker = new Redis(redisUrl);
  try {
    await marker.echo('start-of-count');
    await fn();
    await marker.echo('end-of-count');
    await monitor.until('ECHO end-of-count');
    const seen = monitor.seen;
    return seen.slice(seen.indexOf('ECHO start-of-count') + 1, seen.indexOf('ECHO end-of-count'));
  } finally {
    monitor.close();
    marker.disconnect();
  }
}

interface MonitorConnection {
  /** Commands seen so far: upper-case names, `ECHO <arg>` for ECHO; Lua's own calls left out. */
  readonly seen: string[];
  /** Resolves once `entry` is in `seen`. */
  until(entry: string): Promise<void>;
  close(): void;
}

/** A socket in MONITOR mode, resolved once Redis has answered `+OK` to MONITOR. */
function monitorLines(redisUrl: string): Promise<MonitorConnection> {
  const url = new URL(redisUrl);
  const socket = net.connect({ host: url.hostname || '127.0.0.1', port: Number(url.port || 6379) });
  const seen: string[] = [];
  const waiters: Array<{ entry: string; resolve: () => void }> = [];
  let buffered = '';
  let started = false;
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.on('connect', () => {
      const password = decodeURIComponent(url.password);
      const user = decodeURIComponent(url.username);
      if (password) socket.write(respCommand(user ? ['AUTH', user, password] : ['AUTH', password]));
      socket.write(respCommand(['MONITOR']));
    });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (line.startsWith('-')) {
          reject(new Error(`MONITOR refused: ${line.slice(1)}`));
          socket.destroy();
          return;
        }
        if (!started) {
          if (line === '+OK') {
            started = true;
            resolve({ seen, until, close: () => socket.destroy() });
          }
          continue;
        }
        const entry = monitorEntry(line);
        if (entry === undefined) continue;
        seen.push(entry);
        for (const w of waiters.splice(0))
          if (w.entry === entry || seen.includes(w.entry)) w.resolve();
          else waiters.push(w);
      }
    });
  });

  function until(entry: string): Promise<void> {
    if (seen.includes(entry)) return Promise.resolve();
    return new Promise((resolve) => waiters.push({ entry, resolve }));
  }
}

/**
 * One MONITOR line, `+1796321496.852325 [0 127.0.0.1:59622] "echo" "start-of-count"`, as the
 * entry `seen` keeps; undefined for a command a Lua script ran (`[0 lua]`).
 */
export function monitorEntry(line: string): string | undefined {
  const source = /^\+\d+\.\d+ \[\d+ (.*?)\] (?=")/.exec(line);
  if (!source || source[1] === 'lua') return undefined;
  const args = [...line.slice(source[0].length).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
  const name = String(args[0]).toUpperCase();
  return name === 'ECHO' ? `ECHO ${args[1]}` : name;
}

function respCommand(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}
