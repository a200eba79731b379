#!/usr/bin/env bash
# One command from a clone to bounded subagent results: installs what is missing (Debian 12),
# builds handoffd and handoff, installs them with the Pi package under PREFIX, and sets handoff up
# for this user: systemd user units when a user systemd answers (else clients start handoffd
# themselves, and it says on which socket, or why they cannot), Pi's settings (the package, and
# the pi-subagents bridge when pi-subagents is installed), Claude Code's settings when `claude` is on the PATH, Codex's when `codex` is, Gemini CLI's when `gemini` is, opencode's when `opencode` is, Kilo Code's when `kilo` is, cline's when `cline` is, GitHub Copilot CLI's when `copilot` is. Each
# step says what it did, or what it skipped and why. Running it again gives the same result.
#
#   scripts/install.sh [--prefix DIR]              install (DIR default ~/.local)
#   scripts/install.sh [--prefix DIR] --uninstall  take out what it installed and its settings
#                                                  entries, nothing else
#   ... --uninstall --purge                        and the artifacts, the queue and the log too
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HANDOFF_BUILD_DIR:-$root/build}"
prefix="${HOME:?HOME is not set}/.local"
uninstall=0
purge=0
usage() { sed -n '9,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while (($#)); do
  case "$1" in
    --prefix) [[ $# -ge 2 ]] || usage; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --uninstall) uninstall=1; shift ;;
    --purge) purge=1; shift ;;
    -h|--help) usage ;;
    *) echo "install: unknown argument $1" >&2; usage ;;
  esac
done
[[ $purge -eq 0 || $uninstall -eq 1 ]] || { echo "install: --purge goes with --uninstall" >&2; exit 2; }
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
share="$prefix/share/handoff"
manifest="$share/install-manifest.txt"   # every file installed, then "dir <d>" for each directory made
say() { echo "install: $*"; }

user_systemd() { command -v systemctl >/dev/null && systemctl --user show-environment >/dev/null 2>&1; }

# The daemon processes of this install (an autostarted one outlives its client).
stop_daemons() {
  local exe pid stopped=0
  for pid in $(pgrep -u "$(id -u)" -x handoffd 2>/dev/null || true); do
    exe="$(readlink "/proc/$pid/exe" 2>/dev/null || true)"
    exe="${exe% (deleted)}"
    if [[ "$exe" == "$prefix/bin/handoffd" ]]; then kill -TERM "$pid" 2>/dev/null && stopped=$((stopped + 1)); fi
  done
  ((stopped == 0)) || say "stopped $stopped running handoffd of $prefix/bin"
}

if ((uninstall)); then
  if [[ ! -f "$manifest" ]]; then say "nothing installed under $prefix (no $manifest)"; exit 0; fi
  if [[ -x "$prefix/bin/handoff" ]]; then
    "$prefix/bin/handoff" setup pi --remove | sed 's/^/install: /'
    "$prefix/bin/handoff" setup claude-code --remove | sed 's/^/install: /'
    "$prefix/bin/handoff" setup codex --remove | sed 's/^/install: /'
    "$prefix/bin/handoff" setup gemini --remove | sed 's/^/install: /'
    "$prefix/bin/handoff" setup opencode --remove | sed 's/^/install: /'
    "$prefix/bin/handoff" setup kilo --remove | sed 's/^/install: /'
    "$prefix/bin/handoff" setup cline --remove | sed 's/^/install: /'
    "$prefix/bin/handoff" setup copilot --remove | sed 's/^/install: /'
  fi
  if grep -qx "systemd enabled" "$manifest" && user_systemd; then
    systemctl --user disable --now handoffd.socket handoffd.service >/dev/null 2>&1 || true
    say "disabled the systemd user units"
  fi
  stop_daemons
  dirs=()
  while IFS= read -r line; do
    case "$line" in
      "dir "*) dirs+=("${line#dir }") ;;
      "systemd enabled") ;;
      *) [[ "$line" == "$prefix"/* ]] && rm -f -- "$line" ;;
    esac
  done < "$manifest"
  rm -f -- "$manifest"
  # The package's own directories, then those this install made (deepest first), when empty.
  find "$share" "$prefix/share/doc/handoff" -depth -type d -empty -delete 2>/dev/null || true
  for ((i = ${#dirs[@]} - 1; i >= 0; i--)); do rmdir -- "${dirs[$i]}" 2>/dev/null || true; done
  say "removed handoff from $prefix"
  state="${XDG_STATE_HOME:-$HOME/.local/state}/handoff"
  # The artifact store as handoffd finds it (an XDG_CACHE_HOME that is not absolute counts as
  # unset), and its former default, which handoffd drains while it exists.
  cache="$HOME/.cache"
  [[ "${XDG_CACHE_HOME:-}" == /* ]] && cache="$XDG_CACHE_HOME"
  store="$cache/handoff/results"
  former="${PI_CODING_AGENT_DIR:-$HOME/.pi/agent}/cache/openpi/subagent-results"
  stores="$store"
  [[ -d "$former" && ! -L "$former" ]] && stores="$store and $former"
  if ((purge)); then
    rm -rf -- "$state" "$store"
    rmdir -- "$cache/handoff" 2>/dev/null || true
    if [[ -d "$former" && ! -L "$former" ]]; then
      rm -rf -- "$former"
      rmdir -- "$(dirname "$former")" 2>/dev/null || true
    fi
    say "purged the queue and log ($state) and the artifacts ($stores)"
  else
    say "kept the queue and log ($state) and the artifacts ($stores); --purge removes them"
  fi
  exit 0
fi

# Build: the two executables and the Pi package, nothing else.
"$root/scripts/setup.sh"
# An existing build tree (scripts/build.sh's) is reused as it is: ninja reconfigures it when needed.
[[ -f "$build/build.ninja" ]] || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target handoffd handoff >/dev/null
say "built handoffd and handoff in $build"
if [[ ! -d "$root/client/pi/node_modules/typescript" ]]; then
  npm ci --prefix "$root/client/pi" --no-audit --no-fund --loglevel=error >/dev/null
fi
npm run --prefix "$root/client/pi" --silent build >/dev/null
say "built the Pi package (client/pi/dist)"

# Install, remembering every file and every directory this made.
made=()
for d in "$prefix/bin" "$prefix/share" "$share" "$prefix/lib" "$prefix/lib/systemd" "$prefix/lib/systemd/user" \
         "$prefix/share/doc" "$prefix/share/doc/handoff"; do
  [[ -d "$d" ]] || made+=("$d")
done
old_made=()
[[ -f "$manifest" ]] && mapfile -t old_made < <(sed -n 's/^dir //p' "$manifest")
# Files an earlier install put there and this one does not (a file since removed from the
# package) go, so that installing twice is installing once.
old_files=()
[[ -f "$manifest" ]] && mapfile -t old_files < <(grep -v -e '^dir ' -e '^systemd enabled$' "$manifest")
rm -rf -- "$share/pi"
cmake --install "$build" --prefix "$prefix" >/dev/null
mkdir -p "$share"
{
  cat "$build/install_manifest.txt"
  echo
  for d in "${old_made[@]}" "${made[@]}"; do echo "dir $d"; done | sort -u
} > "$manifest.new"
for f in "${old_files[@]}"; do
  grep -qxF -- "$f" "$manifest.new" || { [[ "$f" == "$prefix"/* ]] && rm -f -- "$f"; }
done
sed -i '/^$/d' "$manifest.new"
say "installed handoffd and handoff into $prefix/bin, the Pi package into $share/pi"

# The daemon: socket activation where a user systemd runs; else every client starts it.
if user_systemd; then
  systemctl --user link "$prefix/lib/systemd/user/handoffd.service" "$prefix/lib/systemd/user/handoffd.socket" >/dev/null 2>&1 || true
  systemctl --user daemon-reload
  if systemctl --user enable --now handoffd.socket >/dev/null 2>&1; then
    echo "systemd enabled" >> "$manifest.new"
    say "enabled handoffd.socket (systemd starts handoffd on the first connection)"
  else
    say "could not enable handoffd.socket (systemctl --user status handoffd.socket says why); clients start handoffd themselves"
  fi
else
  # Then the clients start handoffd, where this shell's would find it: say where, or why they
  # will not (doctor's socket line, docs/configuration.md "The socket"; doctor starts nothing).
  socket_line="$("$prefix/bin/handoff" doctor 2>/dev/null | grep -m1 -e '^ok   socket ' -e '^FAIL the socket directory ' || true)"
  if [[ "${HANDOFF_AUTOSTART:-}" == 0 ]]; then
    say "skipped systemd: no user systemd instance answers, and HANDOFF_AUTOSTART=0 in this shell keeps clients from starting handoffd: run $prefix/bin/handoffd yourself"
  elif [[ "$socket_line" == "ok   socket "* ]]; then
    say "skipped systemd: no user systemd instance answers; clients start handoffd themselves when none runs, on ${socket_line#ok   socket }"
  else
    say "skipped systemd: no user systemd instance answers, and clients cannot start handoffd: ${socket_line#FAIL }"
  fi
fi
mv "$manifest.new" "$manifest"

# The harnesses.
agent_dir="${PI_CODING_AGENT_DIR:-$HOME/.pi/agent}"
if command -v pi >/dev/null || [[ -d "$agent_dir" ]]; then
  "$prefix/bin/handoff" setup pi --package "$share/pi" | sed 's/^/install: /'
else
  say "skipped Pi: no pi on the PATH and no $agent_dir (run $prefix/bin/handoff setup pi after installing Pi)"
fi
if command -v claude >/dev/null; then
  "$prefix/bin/handoff" setup claude-code | sed 's/^/install: /'
else
  say "skipped Claude Code: no claude on the PATH (run $prefix/bin/handoff setup claude-code after installing it)"
fi
if command -v codex >/dev/null; then
  "$prefix/bin/handoff" setup codex | sed 's/^/install: /'
else
  say "skipped Codex: no codex on the PATH (run $prefix/bin/handoff setup codex after installing it)"
fi
if command -v gemini >/dev/null; then
  "$prefix/bin/handoff" setup gemini | sed 's/^/install: /'
else
  say "skipped Gemini CLI: no gemini on the PATH (run $prefix/bin/handoff setup gemini after installing it)"
fi
if command -v opencode >/dev/null; then
  "$prefix/bin/handoff" setup opencode | sed 's/^/install: /'
else
  say "skipped opencode: no opencode on the PATH (run $prefix/bin/handoff setup opencode after installing it)"
fi
if command -v kilo >/dev/null; then
  "$prefix/bin/handoff" setup kilo | sed 's/^/install: /'
else
  say "skipped Kilo Code: no kilo on the PATH (run $prefix/bin/handoff setup kilo after installing it)"
fi
if command -v cline >/dev/null; then
  "$prefix/bin/handoff" setup cline | sed 's/^/install: /'
else
  say "skipped cline: no cline on the PATH (run $prefix/bin/handoff setup cline after installing it)"
fi
if command -v copilot >/dev/null; then
  "$prefix/bin/handoff" setup copilot | sed 's/^/install: /'
else
  say "skipped GitHub Copilot CLI: no copilot on the PATH (run $prefix/bin/handoff setup copilot after installing it)"
fi
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) say "note: $prefix/bin is not on your PATH; add it to use the handoff command" ;;
esac
