// docs/design.md §11: every malformed or hostile input gets a clear JSON-RPC error, and the
// daemon keeps serving everyone else.
#include <doctest/doctest.h>

#include <csignal>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "support/daemon_process.hpp"
#include "support/daemon_status.hpp"
#include "support/raw_client.hpp"

using namespace handoff::test;

namespace {

json raw_reply(raw_client& c, const std::string& bytes) {
  c.send_raw(bytes);
  auto frame = c.read_frame();
  REQUIRE_MESSAGE(frame.has_value(), "no reply to: " << bytes.substr(0, 80));
  return json::parse(*frame);
}

// The daemon still serves a fresh connection.
void still_serving(const daemon_process& d) {
  raw_client fresh(d.socket());
  json r = fresh.call("daemon/status", nullptr);
  REQUIRE(r.contains("result"));
  CHECK(r["result"]["version"].is_string());
}

}  // namespace

TEST_CASE("malformed frames get spec errors and the connection lives on") {
  daemon_process d({"--max-frame-bytes", "65536"});
  raw_client c(d.socket());
  CHECK(raw_reply(c, "{not json\n")["error"]["code"] == -32700);
  CHECK(raw_reply(c, "[1,2,3]\n")["error"]["code"] == -32600);
  CHECK(raw_reply(c, R"({"jsonrpc":"1.0","id":1,"method":"daemon/status"})" "\n")["error"]["code"] == -32600);
  json unknown = raw_reply(c, R"({"jsonrpc":"2.0","id":"u","method":"no/such"})" "\n");
  CHECK(unknown["error"]["code"] == -32601);
  CHECK(unknown["id"] == "u");
  std::string deep(20000, '[');  // under the frame cap: the depth cap must catch it
  CHECK(raw_reply(c, R"({"jsonrpc":"2.0","id":2,"method":"daemon/status","params":)" + deep + "\n")["error"]["code"] == -32700);
  std::string bad_utf8 = std::string(R"({"jsonrpc":"2.0","id":3,"method":"subagent/started","params":{"parentId":"p)") + "\xff\xfe" + R"(","childId":"c"}})" "\n";
  CHECK(raw_reply(c, bad_utf8)["error"]["code"] == -32700);
  json huge = raw_reply(c, R"({"jsonrpc":"2.0","id":4,"method":"subagent/wait","params":{"parentId":"p","childIds":["a"],"timeoutMs":1e400}})" "\n");
  CHECK(huge["error"]["code"].get<int>() < 0);
  // An oversized frame is skipped and reported; the next frame on the same connection works.
  std::string big = R"({"jsonrpc":"2.0","id":5,"method":"daemon/status","params":{"pad":")" + std::string(100000, 'x') + "\"}}\n";
  json over = raw_reply(c, big);
  CHECK(over["error"]["code"] == -32003);
  json ok = c.call("daemon/status", nullptr);
  CHECK(ok.contains("result"));
  still_serving(d);
}

TEST_CASE("a request whose id or method comes again after its params is refused, one that is not JSON is a parse error") {
  daemon_process d;
  raw_client c(d.socket());
  // Routed by the first "method", but the last one is the request's (JSON: the last key wins).
  json twice = raw_reply(c, R"({"jsonrpc":"2.0","id":6,"method":"subagent/started","params":{"parentId":"p","childId":"c"},"method":"no/such"})" "\n");
  CHECK(twice["id"] == 6);
  CHECK(twice["error"]["code"] == -32600);
  // Not started: the handler did not run.
  CHECK(c.call("subagent/check", {{"parentId", "p"}, {"childId", "c"}})["error"]["code"] == -32001);
  json other_id = raw_reply(c, R"({"jsonrpc":"2.0","id":7,"method":"daemon/status","params":{},"id":8})" "\n");
  CHECK(other_id["id"] == 8);
  CHECK(other_id["error"]["code"] == -32600);
  // "params" twice is JSON's business: the last one is the request's.
  json params_twice = raw_reply(c, R"({"jsonrpc":"2.0","id":9,"method":"subagent/started","params":{"parentId":7},"params":{"parentId":"p","childId":"d"}})" "\n");
  CHECK(params_twice["id"] == 9);
  CHECK(params_twice["result"]["state"] == "running");
  // A frame written as a request but not JSON: a parse error (its id unknown), whatever its
  // method, known or not, answered at once or by a coroutine.
  for (const char* method : {"no/such", "subagent/started", "subagent/check"}) {
    json broken = raw_reply(c, std::string(R"({"jsonrpc":"2.0","id":10,"method":")") + method + R"(","params":{"parentId":})" "\n");
    CHECK_MESSAGE(broken["error"]["code"] == -32700, method);
    CHECK(broken["id"].is_null());
  }
  still_serving(d);
}

TEST_CASE("wrong types and out-of-range params name the field") {
  daemon_process d;
  raw_client c(d.socket());
  auto err = [&](const std::string& method, const json& params) { return c.call(method, params)["error"]; };
  json e = err("subagent/completed", {{"parentId", "p"}, {"childId", 7}, {"status", "done"}, {"finalText", "x"}});
  CHECK(e["code"] == -32602);
  CHECK(e["message"].get<std::string>().find("childId") != std::string::npos);
  e = err("subagent/completed", {{"parentId", "p"}, {"childId", "c"}, {"status", "maybe"}, {"finalText", "x"}});
  CHECK(e["code"] == -32602);
  CHECK(e["message"].get<std::string>().find("status") != std::string::npos);
  e = err("subagent/completed", {{"parentId", "p"}, {"childId", "c"}, {"status", "done"}});
  CHECK(e["message"].get<std::string>().find("finalText") != std::string::npos);
  json many = json::array();
  for (int i = 0; i < 65; ++i) many.push_back("c" + std::to_string(i));
  e = err("subagent/wait", {{"parentId", "p"}, {"childIds", many}});
  CHECK(e["code"] == -32602);
  CHECK(e["message"].get<std::string>().find("childIds") != std::string::npos);
  e = err("subagent/wait", {{"parentId", "p"}, {"childIds", {"a"}}, {"timeoutMs", -5}});
  CHECK(e["message"].get<std::string>().find("timeoutMs") != std::string::npos);
  e = err("artifact/read", {{"sha256", "../../etc/passwd"}});
  CHECK(e["code"] == -32602);
  e = err("artifact/read", {{"sha256", std::string(64, 'A')}});
  CHECK(e["code"] == -32602);
  e = err("artifact/read", {{"sha256", std::string(64, 'a')}});
  CHECK(e["code"] == -32007);
  e = err("subagent/started", {{"parentId", std::string(300, 'p')}, {"childId", "c"}});
  CHECK(e["message"].get<std::string>().find("parentId") != std::string::npos);
  still_serving(d);
}

TEST_CASE("a client that never reads cannot grow the daemon or stall others") {
  daemon_process d({"--max-outbox-bytes", "262144"});
  raw_client hog(d.socket());
  // Shrink our receive buffer, then ask for large replies and never read them.
  int small = 4096;
  ::setsockopt(hog.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  raw_client setup(d.socket());
  setup.call("subagent/completed", {{"parentId", "p"}, {"childId", "big"}, {"status", "done"},
                                    {"finalText", numbered_report(40000, 400, "big")}});
  std::string req;
  for (int i = 0; i < 400; ++i)
    req += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":"subagent/check","params":{"parentId":"p","childId":"big"}})" "\n";
  hog.send_raw(req);
  // Everyone else is served promptly meanwhile.
  auto t0 = std::chrono::steady_clock::now();
  still_serving(d);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  CHECK(hog.closed_within(std::chrono::seconds(10)));
  CHECK(d.log().find("outbox over") != std::string::npos);
  still_serving(d);
}

TEST_CASE("abrupt disconnects mid-frame and mid-wait leave the daemon serving") {
  daemon_process d;
  {
    raw_client c(d.socket());
    c.send_raw(R"({"jsonrpc":"2.0","id":1,"method":"subagent/comp)");
  }
  {
    raw_client c(d.socket());
    c.call("subagent/started", {{"parentId", "p"}, {"childId", "a"}});
    c.send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "subagent/wait"}, {"params", {{"parentId", "p"}, {"childIds", {"a"}}}}});
    REQUIRE(waits_asleep(d.socket(), 1));  // hung up mid-wait, not before the wait was read
  }
  still_serving(d);
  // The result completed after the waiter vanished is still there for the next wait.
  raw_client c(d.socket());
  c.call("subagent/completed", {{"parentId", "p"}, {"childId", "a"}, {"status", "done"}, {"finalText", "kept"}});
  json s = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"a"}}, {"timeoutMs", 1000}})["result"]["sections"];
  REQUIRE(s.size() == 1);
  CHECK(s[0]["text"] == "kept");
}

TEST_CASE("a frame dribbled too slowly is cut off") {
  daemon_process d({"--frame-timeout-ms", "1000"});
  raw_client slow(d.socket());
  slow.send_raw(R"({"jsonrpc":"2.0",)");
  CHECK(slow.closed_within(std::chrono::seconds(5)));
  still_serving(d);
}

TEST_CASE("connections beyond the cap are refused with an error") {
  daemon_process d({"--max-connections", "3"});
  std::vector<std::unique_ptr<raw_client>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<raw_client>(d.socket()));
    REQUIRE(held.back()->call("daemon/status", nullptr).contains("result"));
  }
  raw_client extra(d.socket());
  auto frame = extra.read_frame(std::chrono::seconds(5));
  REQUIRE(frame.has_value());
  CHECK(json::parse(*frame)["error"]["code"] == -32004);
  CHECK(extra.closed_within(std::chrono::seconds(5)));
  held.pop_back();
  // The freed place is taken again: the daemon has seen the hang-up (status's connection counts).
  REQUIRE(status_becomes(d.socket(), [](const json& s) { return s.at("connections") == 3; }));
  still_serving(d);
}

TEST_CASE("a peer with another uid is refused") {
  if (::geteuid() != 0) {
    MESSAGE("needs root to act as another uid; skipped");
    return;
  }
  daemon_process d;
  // Open the way on purpose so only the SO_PEERCRED check stands between the stranger and us.
  std::filesystem::permissions(d.socket().parent_path().parent_path(), std::filesystem::perms::all);
  std::filesystem::permissions(d.socket().parent_path(), std::filesystem::perms::all);
  std::filesystem::permissions(d.socket(), std::filesystem::perms::all);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_IGN);  // the daemon may close before our request is written
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", d.socket().c_str());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ::_exit(4);
    std::string req = R"({"jsonrpc":"2.0","id":1,"method":"daemon/status"})" "\n";
    (void)!::write(fd, req.data(), req.size());
    char buf[256];
    ssize_t n = ::read(fd, buf, sizeof buf);
    ::_exit(n <= 0 ? 0 : 5);  // closed (EOF or reset) without a word
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(d.log().find("refused a connection from uid 65534") != std::string::npos);
  still_serving(d);
}

TEST_CASE("a second daemon on the same socket refuses to start") {
  daemon_process d;
  std::string out;
  FILE* p = ::popen((std::string(HANDOFFD_PATH) + " --socket " + d.socket().string() + " --artifact-dir " +
                     d.artifact_dir().string() + " --queue-dir " + d.queue_dir().string() + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  int rc = ::pclose(p);
  CHECK(WEXITSTATUS(rc) != 0);
  CHECK(out.find("already serving") != std::string::npos);
  still_serving(d);
}
