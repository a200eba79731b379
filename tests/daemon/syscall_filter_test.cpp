// Does handoffd still work inside the sandbox handoffd.service puts it in? Without a systemd
// to start it under, the next best check: run it under strace through a full session (bind,
// completed -> wait, artifact/read, auto-delivery, status, gc, SIGTERM) and hold every system
// call it made against the unit's own SystemCallFilter= lines, expanded by systemd-analyze;
// every socket it created against RestrictAddressFamilies=AF_UNIX; every mapping against
// MemoryDenyWriteExecute=yes. A call outside the filter would be refused with EPERM
// (SystemCallErrorNumber=) in production, and this test names it.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/child_process.hpp"
#include "support/raw_client.hpp"
#include "support/socket_probe.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace handoff::test;

namespace {

std::string run(const std::string& command) {
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  REQUIRE_MESSAGE(::pclose(p) == 0, command);
  return out;
}

// A syscall set ("@system-service") or name, expanded recursively by systemd-analyze.
void expand(const std::string& item, std::set<std::string>& out) {
  if (item[0] != '@') {
    out.insert(item);
    return;
  }
  std::istringstream lines(run("systemd-analyze syscall-filter " + item));
  std::string line;
  std::getline(lines, line);  // the set's own name
  while (std::getline(lines, line)) {
    const auto start = line.find_first_not_of(' ');
    if (start == std::string::npos || line[start] == '#') continue;
    const std::string name = line.substr(start);
    if (name != item) expand(name, out);
  }
}

// The syscalls handoffd.service allows: its SystemCallFilter= lines in order, an allow list
// first, then "~" lines taking sets away.
std::set<std::string> allowed_by_unit() {
  std::ifstream unit(fs::path(HANDOFF_SOURCE_DIR) / "systemd" / "handoffd.service.in");
  REQUIRE(unit);
  std::set<std::string> allowed;
  std::string line;
  int lines = 0;
  while (std::getline(unit, line)) {
    if (!line.starts_with("SystemCallFilter=")) continue;
    ++lines;
    std::string value = line.substr(std::string("SystemCallFilter=").size());
    const bool deny = value.starts_with("~");
    if (deny) value.erase(0, 1);
    std::istringstream words(value);
    std::set<std::string> named;
    for (std::string w; words >> w;) expand(w, named);
    for (const auto& s : named) deny ? static_cast<void>(allowed.erase(s)) : static_cast<void>(allowed.insert(s));
  }
  REQUIRE(lines == 2);
  REQUIRE(allowed.size() > 100);
  return allowed;
}

// Everything `strace -f` logged: syscall names, plus the lines themselves for the flag checks.
struct trace {
  std::set<std::string> calls;
  std::vector<std::string> lines;
};
trace read_trace(const fs::path& log) {
  static const std::regex call(R"(^\d+ +([a-z0-9_]+)\()");
  trace t;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, call)) t.calls.insert(m[1]);
    t.lines.push_back(std::move(line));
  }
  return t;
}

// A session that reaches every code path a user's day does.
void exercise(const fs::path& socket) {
  raw_client worker(socket);
  const std::string text = numbered_report(50000, 600, "traced");
  json done = worker.call("subagent/completed", {{"parentId", "p"}, {"childId", "w"}, {"status", "done"},
                                                 {"finalText", text}});
  REQUIRE_MESSAGE(done.contains("result"), done.dump());
  json w = worker.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"w"}}, {"timeoutMs", 10000}});
  REQUIRE(w["result"]["sections"][0]["artifact"]["saved"] == true);
  CHECK(worker.call("artifact/read", {{"sha256", done["result"]["sha256"]}, {"offset", 300}, {"limit", 10}})
            .contains("result"));

  // The parent registers after the wait, so only the auto-delivery asks it for its usage.
  raw_client parent(socket);
  REQUIRE(parent.call("initialize", {{"parentId", "p"}, {"clientName", "strace"}}).contains("result"));
  worker.call("subagent/completed", {{"parentId", "p"}, {"childId", "a"}, {"status", "done"}, {"finalText", text + "!"}});
  parent.notify("parent/state", {{"parentId", "p"}, {"state", "idle"}});
  json ask = parent.read(std::chrono::seconds(20));
  REQUIRE(ask.value("method", "") == "context/usage");
  parent.send({{"jsonrpc", "2.0"}, {"id", ask["id"]}, {"result", {{"tokens", 1000}, {"contextWindow", 200000}}}});
  json deliver = parent.read(std::chrono::seconds(20));
  REQUIRE(deliver.value("method", "") == "parent/deliver");
  parent.send({{"jsonrpc", "2.0"}, {"id", deliver["id"]}, {"result", json::object()}});

  CHECK(worker.call("daemon/status", nullptr).contains("result"));
  CHECK(worker.call("daemon/gc", {{"dryRun", false}}).contains("result"));
}

}  // namespace

TEST_CASE("every system call, socket and mapping handoffd makes is allowed by handoffd.service") {
  REQUIRE_MESSAGE(fs::exists("/usr/bin/strace"), "strace is missing: apt-get install strace");
  const std::set<std::string> allowed = allowed_by_unit();

  temp_dir dir("syscalls");
  fs::create_directory(dir / "run");
  fs::permissions(dir / "run", fs::perms::owner_all, fs::perm_options::replace);
  const fs::path socket = dir / "run" / "handoffd.sock";
  child_process traced({{"/usr/bin/strace", "-f", "-qq", "-o", (dir / "trace").string(), HANDOFFD_PATH,
                         "--socket", socket.string(), "--artifact-dir", (dir / "a").string(), "--queue-dir",
                         (dir / "q").string()},
                        {}, {"NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS"}, dir / "log"});
  // Up once it accepts (listen() follows bind(): the socket file alone is not enough).
  bool up = false;
  for (int i = 0; i < 1000 && !up; ++i) {
    up = fs::is_socket(fs::symlink_status(socket)) && socket_accepts(socket);
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the poll interval, 10 s in all
  }
  REQUIRE_MESSAGE(up, traced.log());
  exercise(socket);

  // SIGTERM to handoffd itself (strace's child: the pid on the trace's first line).
  std::ifstream head(dir / "trace");
  pid_t daemon_pid = 0;
  head >> daemon_pid;
  REQUIRE(daemon_pid > 0);
  REQUIRE(::kill(daemon_pid, SIGTERM) == 0);
  CHECK(traced.wait(std::chrono::seconds(30)) == 0);

  const trace t = read_trace(dir / "trace");
  // The trace did see the session: it listened, accepted, and wrote files.
  REQUIRE(t.calls.contains("listen"));
  REQUIRE((t.calls.contains("accept") || t.calls.contains("accept4")));
  REQUIRE(t.calls.contains("fsync"));
  std::string outside;
  for (const auto& c : t.calls)
    if (!allowed.contains(c)) outside += " " + c;
  CHECK_MESSAGE(outside.empty(), "system calls outside handoffd.service's SystemCallFilter=:" << outside);

  for (const auto& line : t.lines) {
    if (line.find(" socket(") != std::string::npos)
      CHECK_MESSAGE(line.find("socket(AF_UNIX") != std::string::npos, "RestrictAddressFamilies=AF_UNIX: " << line);
    if (line.find("PROT_WRITE|PROT_EXEC") != std::string::npos)
      FAIL_CHECK("MemoryDenyWriteExecute=yes: " << line);
  }
}
