import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { knownItemCollection, parseDescriptions, type KnownItemOptions } from './debian-descriptions';
import type { Vaswani } from './vaswani';

/**
 * Debian's package descriptions (bookworm main's `Translation-en`) for the second collection of
 * issue 28 (`debian-descriptions.ts`), fetched by apt into a private state folder (as
 * `scripts/fetch-valkey.sh` does: the machine's apt sources and lists are not touched) the first
 * time and read from there after.
 */

/** Where apt's index for the collection is kept: `DEBIAN_DESCRIPTIONS_DIR`, else `.cache/debian-descriptions` in the repository. */
export function debianDescriptionsDir(): string {
  return process.env.DEBIAN_DESCRIPTIONS_DIR ?? resolve(__dirname, '..', '..', '.cache', 'debian-descriptions');
}

/** The `Translation-en` file of bookworm main in `dir`, if apt has fetched it. */
function translationFile(dir: string): string | undefined {
  const lists = join(dir, 'lists');
  if (!existsSync(lists)) return undefined;
  const name = readdirSync(lists).find((f) => /_dists_bookworm_main_i18n_Translation-en(\.\w+)?$/.test(f));
  return name && join(lists, name);
}

/** Fetches bookworm main's `Translation-en` into `dir` unless it is there; returns its text (apt's own helper decompresses it). */
export function readDebianTranslations(dir = debianDescriptionsDir()): string {
  let file = translationFile(dir);
  if (!file) {
    const keyring = '/usr/share/keyrings/debian-archive-keyring.gpg';
    if (!existsSync(keyring))
      throw new Error(
        `debian descriptions: ${keyring} missing (not Debian?); set DEBIAN_DESCRIPTIONS_DIR to a folder with lists/*_dists_bookworm_main_i18n_Translation-en`,
      );
    mkdirSync(join(dir, 'lists', 'partial'), { recursive: true });
    mkdirSync(join(dir, 'preferences.d'), { recursive: true });
    writeFileSync(join(dir, 'sources.list'), `deb [signed-by=${keyring}] http://deb.debian.org/debian bookworm main\n`);
    const opts = [
      ['Dir::Etc::sourcelist', join(dir, 'sources.list')],
      ['Dir::Etc::sourceparts', '/nonexistent'],
      ['Dir::Etc::preferencesparts', join(dir, 'preferences.d')],
      ['Dir::State::Lists', join(dir, 'lists')],
      ['Dir::Cache', dir],
      ['Acquire::Languages', 'en'],
      ['APT::Sandbox::User', 'root'],
    ].flatMap(([k, v]) => ['-o', `${k}=${v}`]);
    execFileSync('apt-get', [...opts, '-qq', 'update'], { stdio: ['ignore', 'ignore', 'inherit'] });
    file = translationFile(dir);
    if (!file) throw new Error(`debian descriptions: apt-get update fetched no Translation-en into ${dir}/lists`);
  }
  return execFileSync('/usr/lib/apt/apt-helper', ['cat-file', file], {
    maxBuffer: 256 * 1024 * 1024,
    encoding: 'utf8',
  });
}

/** The collection as the bench uses it (fetching apt's index first if needed). */
export function loadDebianKnownItem(options: Partial<KnownItemOptions> = {}, dir = debianDescriptionsDir()): Vaswani {
  return knownItemCollection(parseDescriptions(readDebianTranslations(dir)), options);
}
