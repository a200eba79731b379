// Where handoffd's socket is by default and the directory it needs (protocol/socket_location.hpp):
// the three rules in order, and the private fallback's directory made 0700 or refused, with the
// reason, when it is a symlink, not a directory, another user's or open to others.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "protocol/socket_location.hpp"
#include "support/scoped_env.hpp"

namespace fs = std::filesystem;
using handoff::rpc::client_socket_location;
using handoff::rpc::daemon_socket_location;
using handoff::rpc::prepare_socket_dir;
using handoff::rpc::socket_source;

namespace {

using socket_env = handoff::test::scoped_env;

// A private scratch directory, removed with its contents.
struct scratch {
  fs::path path;
  scratch() {
    std::string name = (fs::temp_directory_path() / "handoff-socket-location-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = name;
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// The message prepare_socket_dir refuses `dir` with; "" when it accepts it.
std::string refusal(const fs::path& dir) {
  try {
    prepare_socket_dir(dir);
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string own_name = "handoff-" + std::to_string(::geteuid());

}  // namespace

TEST_CASE("the socket: HANDOFF_SOCKET for clients, else under XDG_RUNTIME_DIR, else ${TMPDIR:-/tmp}/handoff-<euid>") {
  socket_env env;
  env.set("HANDOFF_SOCKET", "/srv/explicit.sock");
  env.set("XDG_RUNTIME_DIR", "/run/user/4242");
  env.set("TMPDIR", "/var/tmp");
  CHECK(client_socket_location().path == "/srv/explicit.sock");
  CHECK(client_socket_location().source == socket_source::handoff_socket);
  // The daemon binds --socket or its own default, never HANDOFF_SOCKET.
  CHECK(daemon_socket_location().path == "/run/user/4242/handoff/handoffd.sock");
  CHECK(daemon_socket_location().source == socket_source::runtime_dir);

  env.set("HANDOFF_SOCKET", "");  // empty is unset
  CHECK(client_socket_location().path == "/run/user/4242/handoff/handoffd.sock");
  CHECK(client_socket_location().source == socket_source::runtime_dir);

  env.set("XDG_RUNTIME_DIR", std::nullopt);
  CHECK(client_socket_location().path == "/var/tmp/" + own_name + "/handoffd.sock");
  CHECK(client_socket_location().source == socket_source::private_fallback);
  CHECK(daemon_socket_location().path == client_socket_location().path);
  // A relative or empty XDG_RUNTIME_DIR counts as unset (the XDG spec), so does a relative TMPDIR.
  env.set("XDG_RUNTIME_DIR", "run/user/4242");
  CHECK(client_socket_location().source == socket_source::private_fallback);
  env.set("XDG_RUNTIME_DIR", "");
  CHECK(client_socket_location().source == socket_source::private_fallback);
  env.set("TMPDIR", "tmp");
  CHECK(client_socket_location().path == "/tmp/" + own_name + "/handoffd.sock");
  env.set("TMPDIR", std::nullopt);
  CHECK(client_socket_location().path == "/tmp/" + own_name + "/handoffd.sock");
  // Spelled one way, as the TypeScript twin's path.join spells it.
  env.set("TMPDIR", "/var//tmp/");
  CHECK(client_socket_location().path == "/var/tmp/" + own_name + "/handoffd.sock");
}

TEST_CASE("the socket's directory is made 0700 when absent, whatever the umask, and accepted again") {
  scratch s;
  const fs::path dir = s.path / own_name;
  const mode_t old = ::umask(0277);  // mkdir alone would give 0500
  const std::string first = refusal(dir);
  ::umask(old);
  CHECK(first == "");
  CHECK(fs::status(dir).permissions() == fs::perms::owner_all);
  CHECK(refusal(dir) == "");
  CHECK(contains(refusal(s.path / "missing" / own_name), "the socket directory " + (s.path / "missing" / own_name).string() +
                                                           " cannot be made: No such file or directory"));
}

TEST_CASE("a symlink at the socket's directory is refused and never followed, even to a private directory of ours") {
  scratch s;
  const fs::path target = s.path / "elsewhere";
  fs::create_directory(target);
  fs::permissions(target, fs::perms::owner_all, fs::perm_options::replace);
  const fs::path dir = s.path / own_name;
  fs::create_directory_symlink(target, dir);
  CHECK(contains(refusal(dir), "the socket directory " + dir.string() + " is a symlink; handoff does not follow one there"));
  CHECK(fs::is_empty(target));
  // A dangling one: nothing is made where it points.
  fs::remove(dir);
  fs::create_directory_symlink(s.path / "not-yet", dir);
  CHECK(contains(refusal(dir), " is a symlink"));
  CHECK_FALSE(fs::exists(s.path / "not-yet"));
}

TEST_CASE("a socket directory open to others, a file, or another user's is refused with what to do") {
  scratch s;
  const fs::path dir = s.path / own_name;
  fs::create_directory(dir);
  fs::permissions(dir, fs::perms::all, fs::perm_options::replace);
  CHECK(refusal(dir) == "the socket directory " + dir.string() + " is mode 0777, open to other users; it must be 0700 (chmod 700 " +
                            dir.string() + ")");
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read, fs::perm_options::replace);
  CHECK(contains(refusal(dir), " is mode 0740"));
  CHECK(fs::status(dir).permissions() == (fs::perms::owner_all | fs::perms::group_read));  // left as found

  const fs::path file = s.path / "file";
  ::close(::creat(file.c_str(), 0600));
  CHECK(refusal(file) == "the socket directory " + file.string() + " exists and is not a directory (move it away)");

  if (::geteuid() != 0) return;  // giving a directory away takes root
  const fs::path theirs = s.path / "theirs";
  fs::create_directory(theirs);
  fs::permissions(theirs, fs::perms::owner_all, fs::perm_options::replace);
  REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
  CHECK(contains(refusal(theirs), "the socket directory " + theirs.string() +
                                      " belongs to uid 65534, not to uid 0 that handoff runs as"));
}
