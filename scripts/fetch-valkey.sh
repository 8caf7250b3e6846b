#!/usr/bin/env bash
# Fetches valkey-server 8.0 (Redis 7.2-compatible: it has WAITAOF, INFO says redis_version 7.2.4)
# from Debian's bookworm-backports into .cache/valkey/ (project-local, git-ignored), for the tests
# of the KVSTORE_DURABILITY levels that need WAITAOF (Debian bookworm's redis-server is 7.0).
#
# Nothing is installed system-wide and the machine's apt sources are not touched: apt reads the
# backports index into a private state folder (.cache/valkey-apt/) and downloads the two .debs,
# which `dpkg -x` unpacks. So the machine's redis-server (7.0, the other tests' server) stays as it
# is, and no root is needed. valkey's libraries are redis-server's (libjemalloc2, liblzf1, libssl3,
# libsystemd0, libatomic1), which installing redis-server brings.
#
# Where the backports suite or Debian's archive key is not available (not Debian bookworm), it
# says so and fails; set VALKEY_SERVER to a valkey-server (or redis-server >= 7.2) binary instead.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.cache/valkey"
if [ -n "${VALKEY_SERVER:-}" ]; then
  echo "valkey: using VALKEY_SERVER=$VALKEY_SERVER"
  exit 0
fi
if [ -x "$dest/usr/bin/valkey-server" ]; then
  echo "valkey: present ($("$dest/usr/bin/valkey-server" --version | cut -d' ' -f1-3))"
  exit 0
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
if [ ! -r "$keyring" ]; then
  echo "valkey: $keyring missing (not Debian?); set VALKEY_SERVER to a valkey-server or redis-server >= 7.2" >&2
  exit 1
fi
state="$root/.cache/valkey-apt"
rm -rf "$state"
mkdir -p "$state/lists/partial" "$state/archives/partial" "$state/debs" "$state/preferences.d"
echo "deb [signed-by=$keyring] http://deb.debian.org/debian bookworm-backports main" >"$state/sources.list"
apt_opts=(
  -o "Dir::Etc::sourcelist=$state/sources.list" -o Dir::Etc::sourceparts=/nonexistent
  -o "Dir::Etc::preferencesparts=$state/preferences.d" -o "Dir::State::Lists=$state/lists"
  -o "Dir::Cache=$state" -o "Dir::Cache::archives=$state/archives"
  # Downloads into a folder of ours, not apt's sandbox user's.
  -o APT::Sandbox::User=root
)
echo "valkey: fetching valkey-server and valkey-tools from bookworm-backports (into .cache/valkey)"
apt-get "${apt_opts[@]}" -qq update
(cd "$state/debs" && apt-get "${apt_opts[@]}" -qq download valkey-server valkey-tools)
rm -rf "$dest.partial"
for deb in "$state"/debs/*.deb; do dpkg -x "$deb" "$dest.partial"; done
"$dest.partial/usr/bin/valkey-server" --version >/dev/null
mv "$dest.partial" "$dest"
rm -rf "$state"
echo "valkey: $("$dest/usr/bin/valkey-server" --version | cut -d' ' -f1-3) in .cache/valkey"
