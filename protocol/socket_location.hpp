// Where handoffd's socket is when no --socket names it, and the private directory it needs
// (docs/configuration.md, "The socket"). One rule for the daemon and the client library, so for
// every `handoff` command, hook and `handoff mcp`; client/pi/src/socket-path.ts is its TypeScript
// twin, held to this one by client/pi/test/socket-path.test.ts (tests/support/wire_description
// --socket prints what this file computes).
//
// In the order tried:
//   1. $HANDOFF_SOCKET, as given (clients only: handoffd binds --socket, else rule 2 or 3)
//   2. $XDG_RUNTIME_DIR/handoff/handoffd.sock: the user's runtime directory, private by the
//      XDG spec (0700, the user's own), the directory `handoff` in it made by handoffd
//   3. ${TMPDIR:-/tmp}/handoff-<euid>/handoffd.sock: the private fallback, where no runtime
//      directory exists (root in a container, a CI runner, a login with no systemd user
//      session). tmux's convention: the directory handoff-<euid> is made 0700 when absent and,
//      as it sits in a directory anybody may write to, checked before anyone binds or dials in
//      it (prepare_socket_dir).
// XDG_RUNTIME_DIR and TMPDIR count only when absolute (the XDG spec: a relative value is
// ignored), as an empty one: a relative one would put each shell's socket somewhere else.
#pragma once

#include <filesystem>
#include <string_view>

namespace handoff::rpc {

// Which rule gave the socket.
enum class socket_source {
  handoff_socket,    // rule 1: $HANDOFF_SOCKET
  runtime_dir,       // rule 2: under $XDG_RUNTIME_DIR
  private_fallback,  // rule 3: ${TMPDIR:-/tmp}/handoff-<euid>
};

struct socket_location {
  std::filesystem::path path;  // the socket; lexically normal, absolute but for a relative HANDOFF_SOCKET
  socket_source source = socket_source::runtime_dir;
};

// Where handoffd binds when not given --socket: rule 2, else rule 3. From the environment alone:
// nothing is created or checked.
socket_location daemon_socket_location();

// Where a client dials when not given a socket: rule 1, else the daemon's.
socket_location client_socket_location();

// Why a client's socket is where it is, for people: "neither HANDOFF_SOCKET nor XDG_RUNTIME_DIR
// is set: the private fallback". "handoff doctor" prints it.
std::string_view client_reason(socket_source source);

// Makes `dir`, a socket's directory, fit to bind or dial in: creates it (mode 0700; not its
// parents) when absent; then it must be a real directory, a symlink there refused and never
// followed, owned by the effective uid and with no group or other permission bits. Throws
// std::runtime_error naming `dir`, what is wrong with it and what to do.
void prepare_socket_dir(const std::filesystem::path& dir);

}  // namespace handoff::rpc
