#!/usr/bin/env bash
# Installs what handoff needs to build and test on Debian 12, only what is missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang pkg-config
  libasio-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libssl-dev libcli11-dev libtomlplusplus-dev
  doctest-dev libbenchmark-dev libclang-rt-14-dev
  socat netcat-openbsd util-linux systemd dpkg-dev file strace tmux iproute2
)
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q >/dev/null
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
