#!/usr/bin/env bash
# The systemd user units: `systemd-analyze verify` finds nothing to say about either (run on
# the build-tree copies, whose ExecStart= is the handoffd just built), and `systemd-analyze
# security --offline=true` rates the service's exposure at most $2 (docs/configuration.md records it).
# usage: units_test.sh BUILD_UNIT_DIR MAX_EXPOSURE
set -euo pipefail
units="$1"
max_exposure="$2"

command -v systemd-analyze >/dev/null || { echo "systemd-analyze is missing: apt-get install systemd" >&2; exit 1; }
# --user needs a runtime directory (for %t) even offline; a private one keeps the test hermetic.
runtime="$(mktemp -d)"
trap 'rm -rf "$runtime"' EXIT
export XDG_RUNTIME_DIR="$runtime"

echo "--- systemd-analyze --user verify"
out="$(systemd-analyze --user verify "$units/handoffd.socket" "$units/handoffd.service" 2>&1)" || {
  echo "$out"; echo "FAIL: verify exited non-zero" >&2; exit 1; }
if [[ -n "$out" ]]; then
  echo "$out"; echo "FAIL: verify has complaints" >&2; exit 1
fi
echo "ok: no complaints"

# The units are meant to be what the tests check: make sure verify does look at them.
broken="$runtime/broken"
mkdir "$broken"
sed 's/^Type=notify$/Type=not-a-type/' "$units/handoffd.service" >"$broken/handoffd.service"
cp "$units/handoffd.socket" "$broken/"
if [[ -z "$(systemd-analyze --user verify "$broken/handoffd.socket" "$broken/handoffd.service" 2>&1)" ]]; then
  echo "FAIL: verify did not notice a broken Type=" >&2; exit 1
fi

echo "--- systemd-analyze --user security --offline=true"
report="$(systemd-analyze --user security --offline=true "$units/handoffd.service" 2>&1)"
echo "$report" | grep -E '^✗|Overall' || true
exposure="$(echo "$report" | sed -n 's/.*Overall exposure level for handoffd.service: \([0-9.]*\).*/\1/p')"
[[ -n "$exposure" ]] || { echo "$report"; echo "FAIL: no exposure level in the report" >&2; exit 1; }
echo "exposure: $exposure (at most $max_exposure)"
awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e <= m) }' || {
  echo "FAIL: exposure $exposure is above $max_exposure" >&2; exit 1; }

# The settings the daemon's contract depends on are really there.
for line in 'Type=notify' 'WatchdogSec=30s' 'Restart=on-failure' 'UMask=0077' 'ProtectSystem=strict' \
            'RestrictAddressFamilies=AF_UNIX' 'NoNewPrivileges=yes' 'MemoryDenyWriteExecute=yes'; do
  grep -qx "$line" "$units/handoffd.service" || { echo "FAIL: handoffd.service lacks $line" >&2; exit 1; }
done
for line in 'ListenStream=%t/handoff/handoffd.sock' 'SocketMode=0600' 'DirectoryMode=0700'; do
  grep -qx "$line" "$units/handoffd.socket" || { echo "FAIL: handoffd.socket lacks $line" >&2; exit 1; }
done
echo "ok"
