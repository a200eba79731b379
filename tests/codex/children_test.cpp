// handoff mcp's subagents (client/cli/harness/codex/children.hpp) run for real: each turn forks a
// stand-in `codex` (a shell script that prints a `--json` event and writes its `-o` file), with no
// handoffd listening (the results wait in the class for one).
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cli/harness/codex/children.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using handoff::cli::codex::children;
using handoff::cli::codex::children_options;
using handoff::cli::codex::phase;

// A codex that answers every turn at once: `answer` in its -o file, exit 0.
fs::path stand_in_codex(const fs::path& dir) {
  const fs::path path = dir / "codex";
  std::ofstream(path) << "#!/bin/sh\n"
                         "last=\n"
                         "while [ $# -gt 0 ]; do case \"$1\" in -o) last=\"$2\"; shift;; esac; shift; done\n"
                         "echo '{\"type\":\"thread.started\",\"thread_id\":\"thread-1\"}'\n"
                         "printf answer > \"$last\"\n";
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

children_options options_in(const handoff::test::temp_dir& dir) {
  ::setenv("HANDOFF_AUTOSTART", "0", 1);  // no handoffd is started for the absent socket
  children_options o;
  o.daemon.socket = (dir / "absent.sock").string();
  o.codex = stand_in_codex(dir.path());
  o.state_dir = dir / "state";
  o.max_running = 4;
  return o;
}

// Polls `done` until it holds or 20 s pass: the class offers nothing to wait on.
bool eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

bool finished(children& kids, const std::string& parent, const std::string& id) {
  const auto v = kids.view(parent, id);
  return v && v->phase == phase::finished;
}

}  // namespace

TEST_CASE("codex children: a finished turn's thread is joined, not held for the server's life") {
  const handoff::test::temp_dir dir("codex-children");
  children kids(options_in(dir));
  std::vector<std::string> ids;
  for (int i = 0; i < 12; ++i)
    ids.push_back(kids.spawn("parent-1", "task " + std::to_string(i), "", dir.path().string(), "").child_id);
  for (const std::string& id : ids) {
    REQUIRE(eventually([&] { return finished(kids, "parent-1", id); }));
    CHECK(kids.view("parent-1", id)->status == "done");
  }
  // Every turn has ended: none of their threads is left to join.
  CHECK(eventually([&] { return kids.turn_threads_held() == 0; }));
  CHECK(kids.turn_threads_held() == 0);
}

TEST_CASE("codex children: a turn that cannot start names the error of the call that failed") {
  const handoff::test::temp_dir dir("codex-children");
  children kids(options_in(dir));
  // No file descriptor left: the turn's stderr file cannot be opened (EMFILE), while the calls
  // that follow it fail otherwise (the turn's answer file does not exist: ENOENT).
  rlimit was{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &was) == 0);
  rlimit low = was;
  low.rlim_cur = std::min<rlim_t>(was.rlim_cur, 256);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
  std::vector<int> held;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) held.push_back(fd);
  std::string id;
  std::string error;
  try {
    id = kids.spawn("parent-1", "task", "", dir.path().string(), "").child_id;
    if (eventually([&] { return finished(kids, "parent-1", id); })) error = kids.view("parent-1", id)->error;
  } catch (...) {
    error = "spawn threw";
  }
  for (const int fd : held) ::close(fd);
  ::setrlimit(RLIMIT_NOFILE, &was);
  INFO(error);
  CHECK(error.find("codex exec could not be started: Too many open files") == 0);
  CHECK(error.find("No such file") == std::string::npos);
}
