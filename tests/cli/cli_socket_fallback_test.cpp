// A shell with neither HANDOFF_SOCKET nor XDG_RUNTIME_DIR (root in a container, a CI runner):
// the real `handoff` starts the real handoffd on the private fallback
// ${TMPDIR:-/tmp}/handoff-<uid>/handoffd.sock and gets a bounded result through it; a fallback
// directory that is a symlink, open to others or another user's is refused with the reason, and
// nothing is made or started through it (protocol/socket_location.hpp).
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli_process.hpp"
#include "support/socket_probe.hpp"
#include "support/temp_dir.hpp"
#include "support/text_files.hpp"

namespace fs = std::filesystem;
using namespace handoff::test;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A user with no runtime directory: HOME, state and cache in a temporary directory, TMPDIR a
// sticky world-writable directory in it (as /tmp is), starting a daemon on (the suite turns it
// off for every other test).
struct shell_without_runtime_dir {
  temp_dir dir{"handoff-fallback"};
  fs::path tmp = dir / "tmp";
  fs::path own = tmp / ("handoff-" + std::to_string(::geteuid()));
  fs::path socket = own / "handoffd.sock";
  std::vector<std::string> env;

  shell_without_runtime_dir() {
    fs::create_directory(tmp);
    fs::permissions(tmp, fs::perms::all | fs::perms::sticky_bit, fs::perm_options::replace);
    fs::create_directories(dir / "home");
    env = {"HOME=" + (dir / "home").string(),
           "TMPDIR=" + tmp.string(),
           "XDG_RUNTIME_DIR",
           "HANDOFF_SOCKET",
           "XDG_STATE_HOME=" + (dir / "state").string(),
           "XDG_CACHE_HOME=" + (dir / "cache").string(),
           "PI_CODING_AGENT_DIR=" + (dir / "agent").string(),
           "HANDOFF_AUTOSTART",
           "HANDOFF_DAEMON=" HANDOFFD_PATH,
           "HANDOFF_IDLE_EXIT_MS=600000"};
  }
  ~shell_without_runtime_dir() {
    for (const pid_t pid : daemons()) ::kill(pid, SIGKILL);
  }

  cli_result run(const std::vector<std::string>& args, std::string input = {}) const {
    return cli_process(args, std::move(input), env).finish(30s);
  }

  // Live handoffd processes started for this shell's fallback socket (zombies not counted).
  std::vector<pid_t> daemons() const {
    std::vector<pid_t> found;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream cmdline(entry.path() / "cmdline");
      const std::string args((std::istreambuf_iterator<char>(cmdline)), {});
      std::ifstream stat(entry.path() / "stat");
      std::string state;
      std::getline(stat, state);
      const auto close = state.rfind(')');
      const bool zombie = close != std::string::npos && close + 2 < state.size() && state[close + 2] == 'Z';
      if (!zombie && contains(args, "handoffd") && contains(args, "--socket=" + socket.string()))
        found.push_back(static_cast<pid_t>(std::stoi(name)));
    }
    return found;
  }
};

}  // namespace

TEST_CASE("neither HANDOFF_SOCKET nor XDG_RUNTIME_DIR: complete starts handoffd on the private fallback, wait gets the result bounded") {
  shell_without_runtime_dir shell;
  REQUIRE_FALSE(fs::exists(shell.own));
  const std::string report = long_answer(4000, 100);  // about 400 KB

  const cli_result completed = shell.run({"complete", "--parent", "p", "--child", "c1", "-"}, report);
  CHECK_MESSAGE(completed.status == 0, completed.err);
  CHECK(fs::symlink_status(shell.own).type() == fs::file_type::directory);
  CHECK(fs::status(shell.own).permissions() == fs::perms::owner_all);
  CHECK(fs::is_socket(shell.socket));
  const std::vector<pid_t> started = shell.daemons();
  REQUIRE(started.size() == 1);  // started by the client, for this socket
  CHECK(listener_pid(shell.socket) == started.front());

  const cli_result waited = shell.run({"wait", "--parent", "p", "c1"});
  CHECK_MESSAGE(waited.status == 0, waited.err);
  CHECK(contains(waited.out, "VERDICT: ship it"));  // the tail kept
  CHECK(waited.out.size() < 48 * 1024);             // within the wait's batch cap, not 400 KB
  CHECK(contains(waited.out, "[Truncated: "));      // and the way to the rest
  CHECK(shell.daemons() == started);

  const cli_result doctor = shell.run({"doctor"});
  CHECK_MESSAGE(contains(doctor.out, "ok   socket " + shell.socket.string() +
                                         " (neither HANDOFF_SOCKET nor XDG_RUNTIME_DIR is set: the private fallback)"),
                doctor.out);
  CHECK(contains(doctor.out, "ok   socket dir " + shell.own.string()));
  CHECK(contains(doctor.out, " answers (protocol "));
}

TEST_CASE("an unsafe private fallback is refused with the reason, and nothing is made or started through it") {
  shell_without_runtime_dir shell;
  const auto refused = [&shell](const std::string& problem) {
    const cli_result r = shell.run({"complete", "--parent", "p", "--child", "c1", "-"}, "the answer");
    CHECK(r.status == 1);
    CHECK_MESSAGE(contains(r.err, "handoff complete: the socket directory " + shell.own.string() + " " + problem), r.err);
    CHECK(contains(r.err, "because neither HANDOFF_SOCKET nor XDG_RUNTIME_DIR is set"));
    CHECK(shell.daemons().empty());
  };

  SUBCASE("a symlink to another directory, even a private one of ours") {
    const fs::path elsewhere = shell.dir / "elsewhere";
    fs::create_directory(elsewhere);
    fs::permissions(elsewhere, fs::perms::owner_all, fs::perm_options::replace);
    fs::create_directory_symlink(elsewhere, shell.own);
    refused("is a symlink; handoff does not follow one there");
    CHECK(fs::is_empty(elsewhere));  // no socket, no lock
    const cli_result doctor = shell.run({"doctor"});
    CHECK(doctor.status == 1);
    CHECK_MESSAGE(contains(doctor.out, "FAIL the socket directory " + shell.own.string() + " is a symlink"), doctor.out);
    CHECK(fs::is_empty(elsewhere));
  }
  SUBCASE("mode 0777") {
    fs::create_directory(shell.own);
    fs::permissions(shell.own, fs::perms::all, fs::perm_options::replace);
    refused("is mode 0777, open to other users; it must be 0700 (chmod 700 " + shell.own.string() + ")");
    CHECK(fs::is_empty(shell.own));
    CHECK(fs::status(shell.own).permissions() == fs::perms::all);  // left as found
  }
  SUBCASE("another user's (as root: given to nobody)") {
    if (::geteuid() != 0) return;  // giving a directory away takes root
    fs::create_directory(shell.own);
    fs::permissions(shell.own, fs::perms::owner_all, fs::perm_options::replace);
    REQUIRE(::chown(shell.own.c_str(), 65534, 65534) == 0);
    refused("belongs to uid 65534, not to uid 0 that handoff runs as");
    CHECK(fs::is_empty(shell.own));
  }
}
