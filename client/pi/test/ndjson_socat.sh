#!/bin/sh
# One subagent/completed -> subagent/wait round trip with plain newline-delimited JSON through
# `socat - UNIX-CONNECT:<sock>`, against a handoffd this script starts in a temporary directory.
# handoffd: $HANDOFFD, else ../../build/daemon/handoffd relative to client/pi. Exits non-zero on
# any failure, printing what it got and the daemon's log.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
handoffd=${HANDOFFD:-$here/../../../build/daemon/handoffd}
[ -x "$handoffd" ] || { echo "ndjson_socat: handoffd not found at $handoffd (build it or set HANDOFFD)" >&2; exit 2; }
command -v socat >/dev/null || { echo "ndjson_socat: socat is not installed" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/handoff-socat-XXXXXX")
daemon_pid=
socat_pid=
cleanup() {
  [ -n "$socat_pid" ] && kill "$socat_pid" 2>/dev/null || true
  [ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "ndjson_socat: FAIL: $1" >&2
  [ -f "$tmp/out" ] && { echo "--- received:" >&2; cat "$tmp/out" >&2; }
  echo "--- handoffd log:" >&2
  cat "$tmp/handoffd.log" >&2 || true
  exit 1
}

mkdir -m 700 "$tmp/run"
sock=$tmp/run/handoffd.sock
"$handoffd" --socket "$sock" --artifact-dir "$tmp/artifacts" --queue-dir "$tmp/queue" >"$tmp/handoffd.log" 2>&1 &
daemon_pid=$!
i=0
until socat -u /dev/null "UNIX-CONNECT:$sock" 2>/dev/null; do
  i=$((i + 1))
  [ "$i" -lt 250 ] || fail "handoffd did not listen within 5 s"
  kill -0 "$daemon_pid" 2>/dev/null || fail "handoffd exited at start"
  sleep 0.02
done

# socat's stdin is a FIFO held open until both replies are in, so the round trip does not depend
# on how the daemon treats a connection the client has half-closed.
mkfifo "$tmp/in"
socat - "UNIX-CONNECT:$sock" <"$tmp/in" >"$tmp/out" 2>"$tmp/socat.err" &
socat_pid=$!
exec 3>"$tmp/in"
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"subagent/completed","params":{"parentId":"sh","childId":"c1","title":"socat","status":"done","finalText":"hello from socat\nlast line"}}' \
  '{"jsonrpc":"2.0","id":2,"method":"subagent/wait","params":{"parentId":"sh","childIds":["c1"],"timeoutMs":5000}}' >&3
i=0
while [ "$(wc -l <"$tmp/out")" -lt 2 ]; do
  i=$((i + 1))
  [ "$i" -lt 500 ] || { exec 3>&-; fail "fewer than 2 replies within 10 s"; }
  kill -0 "$socat_pid" 2>/dev/null || { exec 3>&-; fail "socat exited early: $(cat "$tmp/socat.err")"; }
  sleep 0.02
done
exec 3>&-
wait "$socat_pid" || true
socat_pid=

# Check the two replies with node (present wherever this package's tests run).
node - "$tmp/out" <<'EOF' || fail "unexpected replies"
const lines = require("node:fs").readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean);
const replies = new Map(lines.map((line) => { const m = JSON.parse(line); return [m.id, m]; }));
const done = replies.get(1), waited = replies.get(2);
const check = (ok, what) => { if (!ok) { console.error("not ok: " + what); process.exit(1); } };
check(done && done.jsonrpc === "2.0" && done.result, "completed answered with a result");
check(done.result.duplicate === false && done.result.lines === 2, "completed: not a duplicate, 2 lines");
check(/^[0-9a-f]{64}$/.test(done.result.sha256), "completed: sha256 is 64 hex");
check(waited && waited.result, "wait answered with a result");
check(waited.result.timedOut === false && waited.result.sections.length === 1, "wait: one section, not timed out");
check(waited.result.sections[0].text === "hello from socat\nlast line", "wait: the exact text");
check(waited.result.text.includes("hello from socat"), "wait: the rendered batch holds the text");
EOF
echo "ndjson_socat: ok (completed -> wait over newline-delimited JSON)"
