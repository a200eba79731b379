// daemon/io_loop.cpp against a real handoffd: after a burst of requests the I/O thread keeps
// polling for --spin-us (so it is measurably busy while requests keep coming within the
// window), then sleeps (an idle daemon uses no CPU), and stops on SIGTERM right after a
// request (inside its window). A bad --spin-us is refused at start. Not covered here: the
// default 100 µs window (too short to see in CPU time) and the pause while completions are
// written (bench/load_bench.cpp shows its CPU).
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "support/daemon_process.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"

using namespace handoff::test;
using namespace std::chrono_literals;

namespace {

// CPU seconds (user + system, every thread) the process has used, from /proc/<pid>/stat.
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  REQUIRE(std::getline(in, line));
  std::istringstream rest(line.substr(line.rfind(')') + 2));  // fields after the command name
  std::string field;
  unsigned long long user = 0, system = 0;
  for (int f = 3; f <= 15 && rest >> field; ++f) {
    if (f == 14) user = std::stoull(field);
    if (f == 15) system = std::stoull(field);
  }
  return static_cast<double>(user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// `count` daemon/status calls, one every `gap`; returns the daemon's CPU seconds over them.
double cpu_over_requests(daemon_process& d, int count, std::chrono::milliseconds gap) {
  raw_client c(d.socket());
  const double before = cpu_seconds(d.pid());
  for (int i = 0; i < count; ++i) {
    const json r = c.call("daemon/status", nullptr);
    REQUIRE_MESSAGE(r.contains("result"), r.dump());
    std::this_thread::sleep_for(gap);
  }
  return cpu_seconds(d.pid()) - before;
}

}  // namespace

TEST_CASE("the I/O thread polls within --spin-us of a request and sleeps once it has passed") {
  // Requests 2 ms apart inside a 10 ms window: the thread never sleeps between them, so it uses
  // CPU for most of the 0.2 s or more they take; with --spin-us 0 the same requests cost a few
  // milliseconds. The bounds leave room for a loaded 2-core machine (a build on the other core).
  daemon_process polling({"--spin-us", "10000"});
  daemon_process sleeping({"--spin-us", "0"});
  const double polled = cpu_over_requests(polling, 100, 2ms);
  const double slept = cpu_over_requests(sleeping, 100, 2ms);
  MESSAGE("CPU over 100 requests 2 ms apart: " << polled << " s polling, " << slept << " s with --spin-us 0");
  CHECK(polled >= 0.05);  // a quarter of the 0.2 s at least: the thread polled between requests
  CHECK(polled > 3 * slept);

  // Then idle: the window has passed and the thread sleeps in epoll_wait.
  std::this_thread::sleep_for(200ms);
  const double idle_before = cpu_seconds(polling.pid());
  std::this_thread::sleep_for(1s);
  const double idle = cpu_seconds(polling.pid()) - idle_before;
  MESSAGE("CPU over 1 s idle after the burst: " << idle << " s");
  CHECK(idle <= 0.05);

  // SIGTERM while it polls: the loop sees the io_context stop.
  raw_client c(polling.socket());
  REQUIRE(c.call("daemon/status", nullptr).contains("result"));
  CHECK(polling.stop() == 0);
}

TEST_CASE("a --spin-us over 10000 is refused at start with the reason") {
  temp_dir tmp("handoff-spin-bad");
  const std::string command = std::string("'") + HANDOFFD_PATH + "' --socket '" + (tmp.path() / "s.sock").string() +
                              "' --artifact-dir '" + (tmp.path() / "a").string() + "' --queue-dir '" +
                              (tmp.path() / "q").string() + "' --spin-us 10001 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  const int status = ::pclose(pipe);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(out.find("--spin-us: 0..10000") != std::string::npos);
}
