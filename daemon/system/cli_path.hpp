// The `handoff` CLI the footers tell the parent to run through Pi's bash (`'CLI' read --bytes`,
// `'CLI' read --plan`): named by an absolute path handoffd resolves itself, so the command works
// whatever the parent shell's PATH holds.
#pragma once

#include <string>

namespace handoff::daemon {

// The name used when no executable is found: the parent's shell must find it on its PATH.
inline constexpr const char* bare_cli_name = "handoff";

// Longest --cli-path, bytes: the footer prints it up to twice, and must still fit beside a
// readable body in the smallest projection (the 512-byte wait floor), like --artifact-dir.
inline constexpr std::size_t max_cli_path_bytes = 200;

// The default: `handoff` beside handoffd's own executable (the .deb puts both in /usr/bin),
// else ../client/handoff from that directory (the build tree), else bare_cli_name.
std::string default_cli_path();

// Throws std::invalid_argument naming --cli-path unless `path` is absolute, at most
// max_cli_path_bytes, free of control and quote characters (' " ` \), and an executable file.
void check_cli_path(const std::string& path);

}  // namespace handoff::daemon
