// `handoff doctor` against a real handoffd and real directories: healthy says so and exits 0;
// a store open to everybody, a file open to others, and a missing daemon are each named with
// their fix, and exit 1.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>

#include "support/daemon_process.hpp"
#include "support/fs_fixtures.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace handoff::test;

namespace {

// Runs `handoff doctor <args>` (with `env`, shell assignments, before it); its exit status and
// everything it printed.
std::pair<int, std::string> doctor_with_env(const std::string& env, const std::string& args) {
  const std::string command = env + " " + std::string(HANDOFF_CLI_PATH) + " doctor " + args + " 2>&1";
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::pair<int, std::string> doctor(const std::string& args) { return doctor_with_env("", args); }

bool has(const std::string& out, const std::string& line) { return out.find(line) != std::string::npos; }

}  // namespace

TEST_CASE("doctor passes every check of a healthy setup and exits 0") {
  daemon_process d;
  auto [status, out] = doctor("--socket " + d.socket().string());
  CHECK_MESSAGE(status == 0, out);
  CHECK(has(out, "ok   socket " + d.socket().string() + ": yours, mode 0600"));
  CHECK(has(out, "ok   handoffd "));
  CHECK(has(out, " answers (protocol 1)"));
  CHECK_FALSE(has(out, "but this handoff is"));  // the daemon and the CLI are the same version
  CHECK(has(out, "ok   artifact dir " + d.artifact_dir().string() + ": yours, mode 0700"));
  CHECK(has(out, "ok   queue dir " + d.queue_dir().string() + ": yours, mode 0700"));
  CHECK(has(out, "free"));
  CHECK_FALSE(has(out, "FAIL"));
}

TEST_CASE("doctor flags a store directory with mode 0777 and says how to fix it") {
  daemon_process d;
  fs::permissions(d.artifact_dir(), fs::perms::all, fs::perm_options::replace);
  auto [status, out] = doctor("--socket " + d.socket().string());
  fs::permissions(d.artifact_dir(), fs::perms::owner_all, fs::perm_options::replace);
  CHECK(status == 1);
  CHECK_MESSAGE(has(out, "FAIL artifact dir " + d.artifact_dir().string() + " is mode 0777: run chmod 700 " +
                             d.artifact_dir().string()),
                out);
  CHECK(has(out, "problem(s) found"));
}

TEST_CASE("doctor flags a queue file that others can read") {
  daemon_process d;
  const fs::path leaked = d.queue_dir() / "done" / "leaked";
  write_file(leaked, "{}", 0644);
  auto [status, out] = doctor("--socket " + d.socket().string());
  CHECK(status == 1);
  CHECK_MESSAGE(has(out, leaked.string() + " is mode 0644: run chmod 600 " + leaked.string()), out);
}

TEST_CASE("doctor without a daemon says how to start one and exits 1") {
  temp_dir dir("doctor-absent");
  fs::create_directory(dir / "run");
  fs::permissions(dir / "run", fs::perms::owner_all, fs::perm_options::replace);
  auto [status, out] = doctor("--socket " + (dir / "run" / "handoffd.sock").string() + " --artifact-dir " +
                              (dir / "a").string() + " --queue-dir " + (dir / "q").string());
  CHECK(status == 1);
  CHECK_MESSAGE(has(out, "FAIL no socket at " + (dir / "run" / "handoffd.sock").string() +
                             ": start the daemon with systemctl --user enable --now handoffd.socket"),
                out);
  // Not there yet is fine while no daemon runs: handoffd creates them.
  CHECK(has(out, "warn artifact dir " + (dir / "a").string() + " does not exist yet"));
}

TEST_CASE("doctor names a plain file where the socket should be") {
  temp_dir dir("doctor-not-socket");
  fs::create_directory(dir / "run");
  fs::permissions(dir / "run", fs::perms::owner_all, fs::perm_options::replace);
  write_file(dir / "run" / "handoffd.sock", "", 0600);
  auto [status, out] = doctor("--socket " + (dir / "run" / "handoffd.sock").string() + " --artifact-dir " +
                              (dir / "a").string() + " --queue-dir " + (dir / "q").string());
  CHECK(status == 1);
  CHECK_MESSAGE(has(out, "is not a socket: remove it"), out);
}

TEST_CASE("doctor without a daemon, when clients start one: not running is fine, and doctor starts none") {
  temp_dir dir("doctor-autostart");
  fs::create_directory(dir / "run");
  fs::permissions(dir / "run", fs::perms::owner_all, fs::perm_options::replace);
  const std::string socket = (dir / "run" / "handoffd.sock").string();
  auto [status, out] = doctor_with_env("HANDOFF_AUTOSTART=1 HANDOFF_DAEMON=" HANDOFFD_PATH,
                                       "--socket " + socket + " --artifact-dir " + (dir / "a").string() +
                                           " --queue-dir " + (dir / "q").string());
  CHECK_MESSAGE(has(out, "ok   no daemon at " + socket + " now: the first client that needs one starts " HANDOFFD_PATH),
                out);
  CHECK_FALSE(has(out, "FAIL no socket"));
  CHECK_FALSE(fs::exists(socket));  // doctor looks; it does not start one
}

TEST_CASE("doctor says which socket it uses and why: --socket, HANDOFF_SOCKET or XDG_RUNTIME_DIR") {
  temp_dir dir("doctor-which-socket");
  const std::string dirs = " --artifact-dir " + (dir / "a").string() + " --queue-dir " + (dir / "q").string();
  const std::string given = (dir / "given.sock").string();
  CHECK(has(doctor("--socket " + given + dirs).second, "ok   socket " + given + " (given with --socket)\n"));
  const std::string named = (dir / "named.sock").string();
  CHECK(has(doctor_with_env("HANDOFF_SOCKET=" + named, dirs).second, "ok   socket " + named + " (HANDOFF_SOCKET is set)\n"));
  const auto [status, out] = doctor_with_env("HANDOFF_SOCKET= XDG_RUNTIME_DIR=" + (dir / "run").string(), dirs);
  CHECK_MESSAGE(has(out, "ok   socket " + (dir / "run" / "handoff" / "handoffd.sock").string() +
                             " (HANDOFF_SOCKET is not set: the user's runtime directory, XDG_RUNTIME_DIR)\n"),
                out);
  CHECK(status == 1);  // no daemon there
}
