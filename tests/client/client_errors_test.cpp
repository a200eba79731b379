// How the client library fails: each failure a client_error of the right kind with a message a
// person can act on. Stand-in servers on temporary sockets play the misbehaving daemon.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "handoff/client.hpp"
#include "support/daemon_process.hpp"
#include "support/temp_dir.hpp"

using namespace handoff;
using handoff::client::connection;
using handoff::client::client_error;
using handoff::client::error_kind;
using std::chrono::milliseconds;

namespace {

// A listening socket at `path` that we control; `serve` (if any) runs on a thread with the
// first accepted connection's fd.
class stand_in {
 public:
  stand_in(const std::filesystem::path& path, std::function<void(int)> serve) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 4) == 0);
    if (serve) thread_ = std::thread([this, serve] {
      const int conn = ::accept(fd_, nullptr, nullptr);
      if (conn >= 0) serve(conn);
    });
  }
  ~stand_in() {
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }

 private:
  int fd_ = -1;
  std::thread thread_;
};

// Reads up to the end of the client's first line.
void read_line(int fd) {
  char c = 0;
  while (::read(fd, &c, 1) == 1 && c != '\n') {
  }
}

void send_text(int fd, const std::string& text) { (void)!::write(fd, text.data(), text.size()); }

connection connect_at(const std::filesystem::path& path, milliseconds call_timeout = milliseconds(30'000)) {
  client::options o;
  o.socket = path;
  o.call_timeout = call_timeout;
  return connection(o);
}

template <class F>
client_error error_of(F&& f) {
  try {
    f();
  } catch (const client_error& e) {
    return e;
  }
  FAIL("no client_error thrown");
  return client_error(error_kind::io, "unreachable");
}

bool contains(const client_error& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

// Sets an environment variable for the scope (unset when `value` is null).
class env_guard {
 public:
  env_guard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~env_guard() { old_.empty() ? ::unsetenv(name_) : ::setenv(name_, old_.c_str(), 1); }

 private:
  const char* name_;
  std::string old_;
};

}  // namespace

TEST_CASE("no socket file: daemon_absent, naming the path and how to start handoffd") {
  test::temp_dir dir;
  const auto path = dir / "handoffd.sock";
  const client_error e = error_of([&] { connect_at(path); });
  CHECK(e.kind() == error_kind::daemon_absent);
  CHECK(contains(e, "handoffd is not running at " + path.string()));
  CHECK(contains(e, "handoffd --socket " + path.string()));
}

TEST_CASE("a stale socket nobody listens on: daemon_absent") {
  test::daemon_process d;
  d.kill_hard();  // leaves its socket file behind
  REQUIRE(std::filesystem::exists(d.socket()));
  CHECK(error_of([&] { connect_at(d.socket()); }).kind() == error_kind::daemon_absent);
}

TEST_CASE("default socket: $HANDOFF_SOCKET, else $XDG_RUNTIME_DIR/handoff/handoffd.sock, else the private fallback") {
  {
    env_guard a("HANDOFF_SOCKET", "/tmp/explicit.sock"), b("XDG_RUNTIME_DIR", "/run/user/4242");
    CHECK(handoff::client::default_socket_path() == "/tmp/explicit.sock");
  }
  {
    env_guard a("HANDOFF_SOCKET", nullptr), b("XDG_RUNTIME_DIR", "/run/user/4242");
    CHECK(handoff::client::default_socket_path() == "/run/user/4242/handoff/handoffd.sock");
  }
  {
    // Neither: ${TMPDIR:-/tmp}/handoff-<euid>, made 0700 by the client itself.
    test::temp_dir tmp;
    env_guard a("HANDOFF_SOCKET", nullptr), b("XDG_RUNTIME_DIR", nullptr), c("TMPDIR", tmp.path().c_str());
    const std::filesystem::path own = tmp / ("handoff-" + std::to_string(::geteuid()));
    CHECK(handoff::client::default_socket_path() == own / "handoffd.sock");
    CHECK(std::filesystem::status(own).permissions() == std::filesystem::perms::owner_all);
    // A fallback directory open to others: refused, naming it, what is wrong and why it is used.
    std::filesystem::permissions(own, std::filesystem::perms::all);
    const client_error e = error_of([] { handoff::client::default_socket_path(); });
    CHECK(e.kind() == error_kind::refused);
    CHECK(contains(e, "the socket directory " + own.string() + " is mode 0777"));
    CHECK(contains(e, "neither HANDOFF_SOCKET nor XDG_RUNTIME_DIR is set"));
    CHECK(contains(e, "--socket"));
  }
  {
    test::daemon_process d;
    env_guard a("HANDOFF_SOCKET", d.socket().c_str());
    connection c;  // no path given: the environment's
    CHECK(c.socket_path() == d.socket());
    CHECK_FALSE(c.daemon_status().version.empty());
  }
}

TEST_CASE("a daemon that never answers: timeout after the call timeout, and a late reply is dropped") {
  test::temp_dir dir;
  const auto path = dir / "silent.sock";
  stand_in server(path, [](int fd) {
    read_line(fd);  // initialize: answered too late
    std::this_thread::sleep_for(milliseconds(400));
    send_text(fd, R"({"jsonrpc":"2.0","id":1,"result":{"state":"late"}})" "\n");
    read_line(fd);  // subagent/started: answered in time
    send_text(fd, R"({"jsonrpc":"2.0","id":2,"result":{"state":"running"}})" "\n");
    ::close(fd);
  });
  connection c = connect_at(path, milliseconds(150));
  const auto started = std::chrono::steady_clock::now();
  const client_error e = error_of([&] { c.initialize(); });
  CHECK(e.kind() == error_kind::timeout);
  CHECK(contains(e, "initialize"));
  CHECK(std::chrono::steady_clock::now() - started < milliseconds(2000));
  // The next call gets its own reply, not the stale one.
  const auto reply = c.call("subagent/started", {{"parentId", "p"}, {"childId", "c"}}, milliseconds(5000));
  CHECK(reply.at("state") == "running");
}

TEST_CASE("a daemon that hangs up: refused") {
  test::temp_dir dir;
  const auto path = dir / "rude.sock";
  stand_in server(path, [](int fd) {
    read_line(fd);
    ::close(fd);
  });
  connection c = connect_at(path);
  const client_error e = error_of([&] { c.daemon_status(); });
  CHECK(e.kind() == error_kind::refused);
  CHECK(contains(e, "closed the connection"));
}

TEST_CASE("a daemon at its connection cap: refused, with the daemon's reason") {
  test::daemon_process d({"--max-connections", "1"});
  connection first = connect_at(d.socket());
  CHECK_FALSE(first.daemon_status().version.empty());
  connection second = connect_at(d.socket());
  const client_error e = error_of([&] { second.daemon_status(); });
  CHECK(e.kind() == error_kind::refused);
  CHECK(contains(e, "too many connections"));
}

TEST_CASE("bytes that are not JSON-RPC, or a result of the wrong shape: protocol") {
  test::temp_dir dir;
  SUBCASE("not JSON") {
    stand_in server(dir / "garbage.sock", [](int fd) {
      read_line(fd);
      send_text(fd, "this is not json\n");
      read_line(fd);
    });
    connection c = connect_at(dir / "garbage.sock");
    const client_error e = error_of([&] { c.daemon_status(); });
    CHECK(e.kind() == error_kind::protocol);
    CHECK(contains(e, "malformed"));
  }
  SUBCASE("a result missing its members") {
    stand_in server(dir / "shape.sock", [](int fd) {
      read_line(fd);
      send_text(fd, R"({"jsonrpc":"2.0","id":1,"result":{"duplicate":false}})" "\n");
      read_line(fd);
    });
    connection c = connect_at(dir / "shape.sock");
    rpc::completed_params p;
    p.parent_id = "p";
    p.child_id = "c";
    p.status = "done";
    const client_error e = error_of([&] { c.completed(p); });
    CHECK(e.kind() == error_kind::protocol);
    CHECK(contains(e, "subagent/completed"));
    CHECK(contains(e, "sha256"));
  }
}

TEST_CASE("daemon/status: typed, whether read straight from the bytes or the slow way, and a bad one refused naming the member") {
  test::temp_dir dir;
  stand_in server(dir / "status.sock", [](int fd) {
    const std::string result =
        R"("version":"v","uptimeMs":5,"connections":1,"parents":2,"children":{"running":3,"completed":4,)"
        R"("delivering":0,"delivered":0},"waits":0,"queue":{"dir":"/q","results":6,"textBytes":7,"deliveries":0,)"
        R"("tombstones":0,"groups":8,"changes":9},"store":{"dir":"/s","files":1,"bytes":2})";
    read_line(fd);  // as handoffd writes it: read straight into the struct
    send_text(fd, R"({"jsonrpc":"2.0","id":1,"result":{)" + result + "}}\n");
    read_line(fd);  // an escape and an unknown member: the slow path, the same struct
    send_text(fd, R"({"jsonrpc":"2.0","id":2,"result":{"new":[1],)" + result + R"(,"version":"\u0076"}})" "\n");
    read_line(fd);  // queue.results missing: refused (a json was returned before, whatever it held)
    std::string missing = result;
    missing.erase(missing.find(R"("results":6,)"), 12);
    send_text(fd, R"({"jsonrpc":"2.0","id":3,"result":{)" + missing + "}}\n");
    read_line(fd);
  });
  connection c = connect_at(dir / "status.sock");
  for (int i = 0; i < 2; ++i) {
    const rpc::status_result s = c.daemon_status();
    CHECK(s.version == "v");
    CHECK(s.children.completed == 4);
    CHECK(s.queue.results == 6);
    CHECK(s.queue.changes == 9);
    CHECK(s.store.bytes == 2u);
  }
  const client_error e = error_of([&] { c.daemon_status(); });
  CHECK(e.kind() == error_kind::protocol);
  CHECK(contains(e, "daemon/status"));
  CHECK(contains(e, "queue.results: required"));
}

TEST_CASE("a cancelled wait: an answer the daemon wrote anyway is returned, and with none the grace ends it") {
  test::temp_dir dir;
  const auto path = dir / "handoffd.sock";
  rpc::wait_params w;
  w.parent_id = "p";
  w.child_ids = {"c"};

  SUBCASE("the daemon answers with the batch after reading the cancel (it had woken already)") {
    std::string seen;
    stand_in daemon(path, [&](int fd) {
      read_line(fd);  // the wait, id 1
      char c = 0;
      while (::read(fd, &c, 1) == 1 && c != '\n') seen += c;  // the cancel
      rpc::wait_result late;
      late.batch.text = "Subagent c finished.\n\nlate but whole";
      send_text(fd, nlohmann::json{{"jsonrpc", "2.0"}, {"id", 1}, {"result", rpc::encode(late)}}.dump() + "\n");
      read_line(fd);  // until the client hangs up
    });
    connection c = connect_at(path);
    client::cancel_signal cancel;
    cancel.raise();
    const rpc::wait_result r = c.wait(w, cancel);
    CHECK(r.batch.text == "Subagent c finished.\n\nlate but whole");
    CHECK(nlohmann::json::parse(seen) == nlohmann::json::parse(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}})"));
  }
  SUBCASE("the daemon says nothing: a timeout once the grace has passed, naming it") {
    stand_in daemon(path, [&](int fd) {
      read_line(fd);
      read_line(fd);
      read_line(fd);  // until the client hangs up
    });
    client::options o;
    o.socket = path;
    o.cancel_grace = milliseconds(200);
    connection c(o);
    client::cancel_signal cancel;
    cancel.raise();
    const auto started = std::chrono::steady_clock::now();
    const client_error e = error_of([&] { c.wait(w, cancel); });
    CHECK(e.kind() == error_kind::timeout);
    CHECK(contains(e, "within 200 ms of asking it to cancel the call"));
    CHECK(std::chrono::steady_clock::now() - started >= milliseconds(200));
  }
}
