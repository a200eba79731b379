// A client's first answer when no daemon runs (client/lib/handoff/daemon_start.hpp): from its
// first connect attempt, through `handoffd --background` detaching and listening, to the answer
// to initialize + daemon/status. Side by side, in the same run and on the same queue: the same
// calls to a daemon already running (the connect the start is compared to), and handoffd started
// by hand in the foreground until its socket answers the same calls (the recovery time the start
// cannot avoid). Once with an empty queue, once with --results queued results (a daemon killed
// with SIGKILL holding them, so every start is a crash recovery). Targets (issue 21): under 100 ms
// on an empty queue; with 10,000 results, no more than the by-hand start plus 100 ms.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench_daemon.hpp"
#include "client_threads.hpp"
#include "e2e_support.hpp"
#include "support/process.hpp"
#include "support/socket_probe.hpp"
#include "handoff/client.hpp"
#include "result_mix.hpp"

namespace hb = handoff::bench;
namespace hc = handoff::client;
namespace ht = handoff::test;
namespace fs = std::filesystem;

namespace {

struct settings : hb::daemon_options {
  std::size_t results = 10'000;
  std::size_t clients = 8;
  std::size_t rounds = 10;
  hb::result_mix mix;
};

// The user a started daemon serves: its runtime, state and cache directories, from which
// handoffd takes its default socket, queue and store, as it does for a real client.
struct user_dirs {
  fs::path socket, queue, store;
  explicit user_dirs(const fs::path& base) {
    fs::create_directories(base / "run");
    fs::permissions(base / "run", fs::perms::owner_all);
    ::setenv("XDG_RUNTIME_DIR", (base / "run").c_str(), 1);
    ::setenv("XDG_STATE_HOME", (base / "state").c_str(), 1);
    ::setenv("XDG_CACHE_HOME", (base / "cache").c_str(), 1);
    ::unsetenv("HANDOFF_SOCKET");
    socket = base / "run" / "handoff" / "handoffd.sock";
    queue = base / "state" / "handoff" / "queue";
    store = base / "cache" / "handoff" / "results";
  }
};

double since(hb::bench_clock::time_point t) { return std::chrono::duration<double>(hb::bench_clock::now() - t).count(); }

// initialize + daemon/status on `c`; throws unless the queue holds `held`.
void first_answer(hc::connection& c, std::size_t held) {
  handoff::rpc::initialize_params hello;
  hello.client_name = "bench-autostart";
  c.initialize(hello);
  const auto status = c.daemon_status();
  const auto results = status.queue.results;
  if (results != held) throw std::runtime_error("the daemon holds " + std::to_string(results) + " results, not " + std::to_string(held));
}

// SIGKILL, then wait until the socket's lock is free: only then can the next daemon start (a
// killed process shows as a zombie while its other threads may still hold its files).
void kill_hard(pid_t pid, const fs::path& socket) {
  if (pid <= 0) throw std::runtime_error("no daemon to kill at " + socket.string());
  ::kill(pid, SIGKILL);
  fs::path lock_path = socket;
  lock_path += ".lock";
  for (int i = 0; i < 10'000; ++i) {
    ::waitpid(pid, nullptr, WNOHANG);  // ours (started by hand): reaped; else init's
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC);
    const bool free = fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (fd >= 0) ::close(fd);
    if (free) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  throw std::runtime_error("handoffd " + std::to_string(pid) + " did not let go of " + lock_path.string());
}

// handoffd in the foreground with the user's defaults (what a user typing it, or a unit, runs).
std::unique_ptr<ht::process> start_by_hand(const fs::path& handoffd) {
  ht::process_spec spec;
  spec.argv = {handoffd.string(), "--log-level=warn"};
  spec.in = ht::stream::null;
  return std::make_unique<ht::process>(std::move(spec));
}

// SIGKILL to a daemon started by hand, reaped, then its socket's lock let go of.
void kill_hard(ht::process& daemon, const fs::path& socket) {
  const pid_t pid = daemon.pid();
  daemon.kill_hard();
  kill_hard(pid, socket);
}

// Connects once the daemon started by hand listens; throws when it exits first.
hc::connection connect_retrying(const fs::path& socket, ht::process& daemon) {
  for (;;) {
    if (!daemon.running())
      throw std::runtime_error("handoffd started by hand exited (status " + std::to_string(daemon.status()) + ")");
    try {
      hc::options o;
      o.socket = socket;
      return hc::connection(o);
    } catch (const hc::client_error& e) {
      if (e.kind() != hc::error_kind::daemon_absent) throw;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
}

struct timings {
  std::vector<double> running, by_hand, autostart;
};

// One round of the three, on the queue as it is (held: the results it holds).
void round(const settings& s, const user_dirs& u, std::size_t held, timings& t) {
  // By hand: from just before the spawn to the first answer.
  auto start = hb::bench_clock::now();
  const auto hand = start_by_hand(s.handoffd);
  {
    hc::connection c = connect_retrying(u.socket, *hand);
    first_answer(c, held);
  }
  t.by_hand.push_back(since(start));
  // Running: a fresh connection to it.
  start = hb::bench_clock::now();
  {
    hc::options o;
    o.socket = u.socket;
    hc::connection c(o);
    first_answer(c, held);
  }
  t.running.push_back(since(start));
  kill_hard(*hand, u.socket);
  // Autostart: from the first connect attempt (the socket is stale now) to the first answer.
  hc::options o;
  o.socket = u.socket;
  o.start = hc::autostart{s.handoffd, std::chrono::seconds(120), std::chrono::minutes(10)};
  start = hb::bench_clock::now();
  {
    hc::connection c(o);
    first_answer(c, held);
  }
  t.autostart.push_back(since(start));
  kill_hard(ht::listener_pid(u.socket), u.socket);
}

std::string ms(double seconds) { return hb::format_us(seconds * 1e6); }

std::vector<std::string> row(const std::string& what, const timings& t) {
  const double running = hb::median(t.running), hand = hb::median(t.by_hand), autostart = hb::median(t.autostart);
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2fx", hand > 0 ? autostart / hand : 0.0);
  return {what, ms(running), ms(hand), ms(autostart), ms(autostart - hand), ratio};
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  CLI::App app{"handoff autostart: a client's first answer with no daemon running, against a running and a by-hand daemon"};
  hb::add_daemon_options(app, s, argv[0], "Directory (on a real disk) for the user's directories");
  app.add_option("--results", s.results, "Results queued for the second case")->capture_default_str();
  app.add_option("--clients", s.clients, "Connections completing them")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--rounds", s.rounds, "Rounds per case (medians over these)")->capture_default_str()->check(CLI::PositiveNumber);
  hb::add_mix_options(app, s.mix);
  CLI11_PARSE(app, argc, argv);
  try {
    fs::create_directories(s.dir);
    hb::scratch_dir base(fs::absolute(s.dir), "autostart");  // the daemons' environment names it
    const user_dirs u(base.path());
    std::cout << "## handoff starting itself\n\n";
    hb::print_environment(base.path(), s.handoffd);
    timings empty, full;
    for (std::size_t r = 0; r < s.rounds; ++r) round(s, u, 0, empty);
    if (s.results > 0) {
      const auto filler = start_by_hand(s.handoffd);
      connect_retrying(u.socket, *filler);
      hb::phase filled;
      hb::complete_results(u.socket, s.clients, s.mix, s.results, [&](std::size_t i) { return s.mix.text(i); }, filled);
      kill_hard(*filler, u.socket);
      for (std::size_t r = 0; r < s.rounds; ++r) round(s, u, s.results, full);
    }
    std::cout << "Medians of " << s.rounds << " rounds, each: handoffd started by hand and timed from just before its "
              << "spawn to the answer to initialize + daemon/status; the same calls on a new connection to it; it is "
              << "killed with SIGKILL; then a client with starting on, timed from its first connect attempt (a stale "
              << "socket) to the same answer, and that daemon killed too.\n\n";
    std::vector<std::vector<std::string>> rows = {row("empty queue", empty)};
    if (s.results > 0) rows.push_back(row(std::to_string(s.results) + " queued results (" + s.mix.describe() + ")", full));
    hb::print_table({"queue", "connect to a running daemon", "started by hand, to its first answer",
                     "client starting it, to its first answer", "start - by hand", "start / by hand"},
                    rows);
    std::cout << "\nTargets: under 100 ms on an empty queue; with queued results, at most the by-hand start + 100 ms.\n";
  } catch (const std::exception& e) {
    std::cerr << "autostart bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
