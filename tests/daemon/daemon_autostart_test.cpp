// The daemon starting itself (client/lib/handoff/daemon_start.hpp, handoffd --background and
// --idle-exit-ms): the real `handoff` CLI with no daemon running starts the real handoffd, in a
// temporary HOME, runtime and state directory of its own.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "cli_process.hpp"
#include "support/daemon_status.hpp"
#include "support/socket_probe.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using handoff::test::cli_process;
using handoff::test::cli_result;
using handoff::test::temp_dir;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A user of its own: HOME, XDG_RUNTIME_DIR, XDG_STATE_HOME in a temporary directory, the
// default socket there, and starting a daemon on (the test suite turns it off for every other
// test).
struct user {
  temp_dir dir{"handoff-autostart"};
  fs::path socket = dir / "run" / "handoff" / "handoffd.sock";
  fs::path log = dir / "state" / "handoff" / "handoffd.log";
  std::vector<std::string> env;

  explicit user(const std::string& idle_exit_ms = "600000") {
    fs::create_directories(dir / "run");
    fs::permissions(dir / "run", fs::perms::owner_all);
    fs::create_directories(dir / "home");
    env = {"HOME=" + (dir / "home").string(),
           "XDG_RUNTIME_DIR=" + (dir / "run").string(),
           "XDG_STATE_HOME=" + (dir / "state").string(),
           "PI_CODING_AGENT_DIR=" + (dir / "agent").string(),
           "XDG_CACHE_HOME=" + (dir / "cache").string(),
           "HANDOFF_SOCKET",
           "HANDOFF_AUTOSTART",
           "HANDOFF_DAEMON=" HANDOFFD_PATH,
           "HANDOFF_IDLE_EXIT_MS=" + idle_exit_ms};
  }
  ~user() {
    for (const pid_t pid : daemons()) ::kill(pid, SIGKILL);
  }

  cli_result run(const std::vector<std::string>& args, std::string input = {},
                 const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> all = env;
    all.insert(all.end(), extra.begin(), extra.end());
    return cli_process(args, std::move(input), all).finish(30s);
  }
  cli_result complete(const std::string& child, const std::string& text) const {
    return run({"complete", "--parent", "p", "--child", child, "-"}, text);
  }

  // Live handoffd processes serving this user's socket (zombies not counted).
  std::vector<pid_t> daemons() const {
    std::vector<pid_t> found;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream cmdline(entry.path() / "cmdline");
      std::string args((std::istreambuf_iterator<char>(cmdline)), {});
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

  // The pid of the process listening at the socket (SO_PEERCRED of a connection), or 0.
  pid_t listener_pid() const { return handoff::test::listener_pid(socket); }
};

// Whether `pid` has exited and closed its files within `within`: gone from /proc, or a zombie
// with no thread left but its first. A zombie first thread alone says too little: when a
// multithreaded process (handoffd) is killed, its first thread becomes a zombie while the others
// still free the memory, and the files (the listening socket) close only after the last of them:
// measured, 30 of 30 killed listeners with 3 threads accepted a connect once their first thread
// read Z, and none once only it was left.
bool gone(pid_t pid, std::chrono::milliseconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  const std::string proc = "/proc/" + std::to_string(pid);
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream stat(proc + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const auto close = line.rfind(')');
    const bool zombie = close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
    std::error_code ec;
    std::size_t threads = 0;
    for (auto it = fs::directory_iterator(proc + "/task", ec); !ec && it != fs::directory_iterator(); it.increment(ec)) ++threads;
    if (zombie && threads <= 1) return true;
    std::this_thread::sleep_for(10ms);  // the poll interval
  }
  return false;
}

}  // namespace

TEST_CASE("no daemon: the first command starts one, detached from it, and the next command talks to the same one") {
  user u;
  REQUIRE(u.daemons().empty());
  // finish() reads the CLI's output to its end: a daemon holding the CLI's stdout or stderr
  // open (as a hook's harness reads them) would keep this from returning.
  const auto started_at = std::chrono::steady_clock::now();
  const cli_result first = u.complete("c1", "the first answer\n");
  const auto took = std::chrono::steady_clock::now() - started_at;
  CHECK_MESSAGE(first.status == 0, first.err);
  CHECK(contains(first.out, "completed child c1 of parent p"));
  CHECK(took < 5s);
  const std::vector<pid_t> running = u.daemons();
  REQUIRE(running.size() == 1);
  const pid_t pid = running.front();
  CHECK(u.listener_pid() == pid);
  CHECK(::getsid(pid) == pid);  // a session of its own: a harness ending the client's group leaves it
  CHECK(fs::read_symlink("/proc/" + std::to_string(pid) + "/cwd") == "/");
  CHECK(fs::exists(u.log));
  CHECK((fs::status(u.log).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
  std::ifstream log(u.log);
  const std::string logged((std::istreambuf_iterator<char>(log)), {});
  CHECK(contains(logged, "listening on " + u.socket.string()));

  const cli_result waited = u.run({"wait", "--parent", "p", "c1"});
  CHECK_MESSAGE(waited.status == 0, waited.err);
  CHECK(contains(waited.out, "the first answer"));
  CHECK(u.daemons() == std::vector<pid_t>{pid});
}

TEST_CASE("eight clients at once and no daemon: one daemon, every request answered") {
  user u;
  std::vector<std::unique_ptr<cli_process>> clients;
  for (int i = 0; i < 8; ++i)
    clients.push_back(std::make_unique<cli_process>(
        std::vector<std::string>{"complete", "--parent", "p", "--child", "k" + std::to_string(i), "-"},
        "answer " + std::to_string(i) + "\n", u.env));
  for (int i = 0; i < 8; ++i) {
    const cli_result r = clients[static_cast<std::size_t>(i)]->finish(30s);
    INFO("client " << i << ": " << r.err);
    CHECK(r.status == 0);
  }
  CHECK(u.daemons().size() == 1);
  std::vector<std::string> args = {"wait", "--parent", "p"};
  for (int i = 0; i < 8; ++i) args.push_back("k" + std::to_string(i));
  const cli_result waited = u.run(args);
  CHECK_MESSAGE(waited.status == 0, waited.err);
  for (int i = 0; i < 8; ++i) CHECK(contains(waited.out, "answer " + std::to_string(i) + "\n"));
}

TEST_CASE("a daemon killed with -9: the next client starts a new one over the stale socket, and every acknowledged result is delivered once") {
  user u;
  for (int i = 0; i < 5; ++i) REQUIRE(u.complete("r" + std::to_string(i), "result " + std::to_string(i) + "\n").status == 0);
  const pid_t first = u.listener_pid();
  REQUIRE(first > 0);
  ::kill(first, SIGKILL);
  REQUIRE(gone(first, 5s));
  CHECK(fs::is_socket(fs::symlink_status(u.socket)));  // left behind: stale

  const cli_result waited = u.run({"wait", "--parent", "p", "r0", "r1", "r2", "r3", "r4"});
  CHECK_MESSAGE(waited.status == 0, waited.err);
  for (int i = 0; i < 5; ++i) CHECK(contains(waited.out, "result " + std::to_string(i) + "\n"));
  const pid_t second = u.listener_pid();
  CHECK(second > 0);
  CHECK(second != first);
  // Delivered: a second wait gives none of them again.
  const cli_result again = u.run({"wait", "--parent", "p", "r0", "r1", "r2", "r3", "r4"});
  for (int i = 0; i < 5; ++i) CHECK_FALSE(contains(again.out, "result " + std::to_string(i) + "\n"));
}

TEST_CASE("an autostarted daemon with no client exits after its idle time, and what it held is there for the next one") {
  user u("300");
  REQUIRE(u.complete("kept", "kept for later\n").status == 0);
  const pid_t pid = u.listener_pid();
  REQUIRE(pid > 0);
  CHECK(gone(pid, 5s));
  CHECK_FALSE(fs::exists(fs::symlink_status(u.socket)));  // its own socket, removed as it left
  std::ifstream log(u.log);
  const std::string logged((std::istreambuf_iterator<char>(log)), {});
  CHECK(contains(logged, "no connection for 300 ms and nothing to deliver: exiting"));

  const cli_result waited = u.run({"wait", "--parent", "p", "kept"});
  CHECK_MESSAGE(waited.status == 0, waited.err);
  CHECK(contains(waited.out, "kept for later\n"));
}

TEST_CASE("a client keeps an idle daemon up: it exits only once the last connection has been gone for its idle time") {
  user u("400");
  cli_process watcher({"watch", "--parent", "p"}, {}, u.env);  // stays connected
  // The watcher started the daemon and is connected to it (beside the status's own connection).
  REQUIRE(handoff::test::status_becomes(u.socket, [](const auto& s) { return s.at("connections") >= 2; }));
  // Three idle times with only the watcher connected: the point of the test, not a guess.
  std::this_thread::sleep_for(1200ms);
  REQUIRE(u.daemons().size() == 1);
  const pid_t pid = u.daemons().front();
  watcher.signal(SIGTERM);
  watcher.finish(5s);
  CHECK(gone(pid, 5s));
}

TEST_CASE("starting turned off, or a command that only looks: no daemon is started") {
  user u;
  const cli_result off = u.complete("c", "x\n");
  CHECK(off.status == 0);  // on: started
  // Waited for by pid until its files are closed (gone()): a process killed with -9 reads an
  // empty cmdline while the kernel frees its memory, before it closes its files, so a second
  // daemons() would miss a daemon that still accepts connections (the next client then saw it
  // close before answering).
  const std::vector<pid_t> started = u.daemons();
  REQUIRE(started.size() == 1);
  for (const pid_t pid : started) ::kill(pid, SIGKILL);
  for (const pid_t pid : started) REQUIRE(gone(pid, 5s));

  const cli_result refused = u.run({"complete", "--parent", "p", "--child", "d", "-"}, "y\n", {"HANDOFF_AUTOSTART=0"});
  CHECK_MESSAGE(refused.status == 3, refused.err);
  CHECK_MESSAGE(contains(refused.err, "handoffd is not running at " + u.socket.string()), refused.err);
  const cli_result status = u.run({"status"});
  CHECK(status.status == 3);
  CHECK(u.daemons().empty());
}

TEST_CASE("a daemon that cannot start: the client says why, with the daemon's own words") {
  user u;
  fs::create_directories(u.socket.parent_path());
  fs::permissions(u.socket.parent_path(), fs::perms::owner_all);
  { std::ofstream(u.socket) << "not a socket"; }
  const cli_result r = u.complete("c", "x\n");
  CHECK(r.status == 3);
  CHECK(contains(r.err, "starting " HANDOFFD_PATH " failed: "));
  CHECK(contains(r.err, u.socket.string() + " exists and is not a socket"));
  CHECK(u.daemons().empty());
}
