#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` in the build directory makes handoff_<version>_<arch>.deb,
# and `dpkg-deb --info` / `--contents` show the binaries, the user units, the Pi package, the
# docs, and the runtime dependencies dpkg-shlibdeps found; the packaged service names
# /usr/bin/handoffd. Builds in a scratch copy of the CPack config so the build tree's own
# _CPack_Packages is not touched.
# usage: package_test.sh BUILD_DIR
set -euo pipefail
build="$1"

for tool in cpack dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (apt-get install dpkg-dev cmake)" >&2; exit 1; }
done
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

echo "--- cpack -G DEB"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1 || {
  cat "$out/cpack.log"; echo "FAIL: cpack failed" >&2; exit 1; }
debs=("$out"/handoff_*.deb)
[[ -f "${debs[0]}" && ${#debs[@]} -eq 1 ]] || { ls "$out"; echo "FAIL: expected one handoff_*.deb" >&2; exit 1; }
deb="${debs[0]}"
echo "built $(basename "$deb")"

fail=0
expect() {  # expect WHAT TEXT PATTERN
  if grep -qE -- "$3" <<<"$2"; then echo "ok: $1"; else echo "FAIL: $1 (no match for /$3/)" >&2; fail=1; fi
}

info="$(dpkg-deb --info "$deb")"
echo "$info" | sed -n '/Package:/,$p'
expect "package name" "$info" '^ Package: handoff$'
expect "section" "$info" '^ Section: utils$'
expect "maintainer" "$info" '^ Maintainer: .+'
expect "description" "$info" '^ Description: bounded head\+tail handoff'
depends="$(sed -n 's/^ Depends: //p' <<<"$info")"
# Debian names: libspdlog1.10 provides libspdlog1.10-fmt9, the name its shlibs file gives.
for lib in libc6 'libstdc\+\+6' libssl3 'libspdlog1[.0-9]*(-fmt[0-9]+)?' 'libfmt[0-9]+'; do
  expect "depends on $lib" "$depends" "(^|, )$lib( |,|$)"
done

contents="$(dpkg-deb --contents "$deb")"
for path in ./usr/bin/handoffd ./usr/bin/handoff ./usr/lib/systemd/user/handoffd.service \
            ./usr/lib/systemd/user/handoffd.socket ./usr/share/handoff/pi/ ./usr/share/doc/handoff/; do
  expect "contains $path" "$contents" " $path\$"
done
expect "contains the Pi package's package.json" "$contents" " ./usr/share/handoff/pi/package.json\$"
if grep -qE 'node_modules|/pi/test/' <<<"$contents"; then echo "FAIL: node_modules or tests in the package" >&2; fail=1; fi

dpkg-deb -x "$deb" "$out/root"
expect "the packaged service starts /usr/bin/handoffd" "$(cat "$out/root/usr/lib/systemd/user/handoffd.service")" \
       '^ExecStart=/usr/bin/handoffd '
"$out/root/usr/bin/handoffd" --version | grep -q '^handoffd ' || { echo "FAIL: packaged handoffd does not run" >&2; fail=1; }
exit $fail
