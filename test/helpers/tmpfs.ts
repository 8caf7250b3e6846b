import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';

/**
 * A small filesystem for the disk-full tests: `mount -t tmpfs -o size=<n>m` on a folder. Mounting
 * needs root (CAP_SYS_ADMIN): as root it is run directly; otherwise through `sudo -n` (no
 * password prompt), owned by the test's user. Where neither works the test fails with the
 * mount's own message and what to do: a disk-full test never skips, because a machine that
 * silently skips it would never know that acknowledged writes survive a full disk.
 */
export function mountTmpfs(dir: string, sizeMb: number): void {
  mkdirSync(dir, { recursive: true });
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const args = ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700,uid=${uid},gid=${gid}`, 'tmpfs', dir];
  const r =
    uid === 0
      ? spawnSync('mount', args, { encoding: 'utf8' })
      : spawnSync('sudo', ['-n', 'mount', ...args], { encoding: 'utf8' });
  if (r.status === 0) return;
  const how = uid === 0 ? 'mount' : 'sudo -n mount';
  throw new Error(
    `could not mount a ${sizeMb} MB tmpfs on ${dir} (\`${how} ${args.join(' ')}\`: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}). ` +
      'This test needs a small real filesystem to fill: run it as root, or as a user with passwordless sudo for mount/umount, ' +
      'in a container allowed to mount (CAP_SYS_ADMIN, e.g. `docker run --cap-add SYS_ADMIN`).',
  );
}

/** Unmounts what `mountTmpfs` mounted (lazily, so a process still holding a file does not block it). */
export function unmountTmpfs(dir: string): void {
  const args = ['-l', dir];
  const r =
    process.getuid?.() === 0
      ? spawnSync('umount', args, { encoding: 'utf8' })
      : spawnSync('sudo', ['-n', 'umount', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`could not unmount ${dir}: ${(r.stderr || `exit ${r.status}`).trim()}`);
}
