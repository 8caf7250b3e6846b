#!/usr/bin/env bash
# Installs the Debian packages the test suite runs for real: redis-server, prometheus (+promtool),
# prometheus-alertmanager (+amtool), and chromium (the search page's browser test, driven by
# playwright-core). Only what is missing; apt-get, with sudo when not root. Then valkey-server 8.0
# (Redis 7.2-compatible, for the WAITAOF durability levels) from bookworm-backports into
# .cache/valkey/, without installing it or touching the apt sources (scripts/fetch-valkey.sh).
set -euo pipefail
here="$(dirname "$0")"
# Where valkey cannot be fetched (not Debian bookworm, no network) the other tests still run; the
# valkey tests then fail, saying how to get it (they never skip).
fetch_valkey() {
  "$here/fetch-valkey.sh" || echo "valkey: not fetched; test/faults/waitaof-valkey.test.ts will fail (README: valkey for the WAITAOF tests)" >&2
}
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
{ command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; } || need+=(prometheus)
{ command -v prometheus-alertmanager >/dev/null 2>&1 && command -v amtool >/dev/null 2>&1; } || need+=(prometheus-alertmanager)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then
  echo "system packages: all present (redis-server, prometheus, promtool, prometheus-alertmanager, amtool, chromium)"
  fetch_valkey
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "need root or sudo to install: ${need[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
echo "system packages: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# --no-install-recommends keeps it small; the packages' own services are not started without systemd,
# and where systemd runs they are stopped again so they do not hold the default ports.
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
for svc in redis-server prometheus prometheus-alertmanager; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    $SUDO systemctl stop "$svc" || true
  fi
done
echo "system packages: installed ${need[*]}"
fetch_valkey
