// daemon/service/dispatch.cpp against a real handoffd: requests pipelined on one connection, most
// answered at once on the I/O thread and written directly, some (completed, wait, and status
// while queue removals run) as coroutines of their own, still get exactly one reply per
// request id, with the right content; notifications get none.
#include <doctest/doctest.h>

#include <sys/socket.h>

#include <functional>
#include <map>
#include <string>

#include "support/daemon_process.hpp"
#include "support/raw_client.hpp"

using namespace handoff::test;

namespace {

std::string line(const json& message) { return message.dump() + "\n"; }

json request(const json& id, const std::string& method, const json& params = nullptr) {
  json r = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) r["params"] = params;
  return r;
}

json notification(const std::string& method, const json& params) {
  return {{"jsonrpc", "2.0"}, {"method", method}, {"params", params}};
}

// What each request id must be answered with; checked once per reply.
using expectation = std::function<void(const json& reply)>;

void expect_result(const json& reply) { REQUIRE_MESSAGE(reply.contains("result"), reply.dump()); }

expectation running() {
  return [](const json& reply) {
    expect_result(reply);
    CHECK(reply["result"]["state"] == "running");
  };
}

expectation status() {
  return [](const json& reply) {
    expect_result(reply);
    CHECK(reply["result"]["version"].is_string());
    CHECK(reply["result"]["store"]["dir"].is_string());
  };
}

expectation error(int code) {
  return [code](const json& reply) {
    REQUIRE_MESSAGE(reply.contains("error"), reply.dump());
    CHECK(reply["error"]["code"] == code);
  };
}

// Reads replies until every expected id was answered, then for a while longer: any id answered
// twice, any reply to an id never asked, and any missing reply fail the test.
void collect(raw_client& c, std::map<std::string, expectation>& expected, std::size_t parse_errors) {
  std::map<std::string, int> seen;
  std::size_t null_ids = 0;
  const std::size_t wanted = expected.size();
  std::size_t answered = 0;
  while (answered < wanted || null_ids < parse_errors) {
    auto frame = c.read_frame(std::chrono::seconds(20));
    REQUIRE_MESSAGE(frame.has_value(), "replies missing: got " << answered << " of " << wanted);
    const json reply = json::parse(*frame);
    if (reply["id"].is_null()) {
      ++null_ids;
      error(-32700)(reply);
      continue;
    }
    const std::string id = reply["id"].dump();  // "7" and "\"7\"" are different ids
    REQUIRE_MESSAGE(expected.count(id) == 1, "a reply to an id never asked: " << reply.dump());
    REQUIRE_MESSAGE(++seen[id] == 1, "two replies to " << id);
    expected[id](reply);
    ++answered;
  }
  // Nothing more may come: not a second reply, not a reply to a notification.
  auto extra = c.read_frame(std::chrono::milliseconds(500));
  CHECK_MESSAGE(!extra.has_value(), "an unexpected frame: " << extra.value_or(""));
  CHECK(null_ids == parse_errors);
}

}  // namespace

TEST_CASE("the daemon answers pipelined small requests around a pending wait exactly once each") {
  daemon_process d;
  raw_client c(d.socket());
  std::map<std::string, expectation> expected;
  auto ask = [&](std::string& out, const json& id, const std::string& method, const json& params,
                 expectation check) {
    out += line(request(id, method, params));
    expected[id.dump()] = std::move(check);
  };
  std::size_t parse_errors = 0;
  std::size_t started_children = 0;

  std::string before;  // up to the completion the wait waits for
  ask(before, "init", "initialize", {{"protocolVersion", "1"}, {"clientName", "dispatch-test"}}, [](const json& r) {
    expect_result(r);
    CHECK(r["result"]["protocolVersion"] == "1");
  });
  ask(before, "s-slow", "subagent/started", {{"parentId", "p"}, {"childId", "slow"}}, running());
  ask(before, "wait", "subagent/wait", {{"parentId", "p"}, {"childIds", {"slow"}}, {"timeoutMs", 60000}},
      [](const json& r) {
        expect_result(r);
        CHECK(r["result"]["timedOut"] == false);
        REQUIRE(r["result"]["sections"].size() == 1);
        CHECK(r["result"]["sections"][0]["childId"] == "slow");
      });
  // 3,000 replies of 50-420 bytes: more than the socket buffer holds while this test is still
  // writing, so direct writes meet a full socket and the writer takes over. A status may wait
  // (queue removals, a new store listing) and so count against the 128 requests in flight:
  // few enough of them that the cap is never reached.
  auto small_ones = [&](std::string& out, const std::string& tag, int count) {
    for (int i = 0; i < count; ++i) {
      const std::string n = tag + std::to_string(i);
      if (i % 25 == 0) ask(out, "st-" + n, "daemon/status", nullptr, status());
      // Integer ids too: they must come back as integers.
      ask(out, tag == "a" ? i : 100000 + i, "subagent/started", {{"parentId", "p"}, {"childId", "k-" + n}}, running());
      ++started_children;
      if (i % 100 != 0) continue;
      ask(out, "u-" + n, "no/such/method", nullptr, error(-32601));
      ask(out, "bad-" + n, "subagent/started", {{"parentId", 7}, {"childId", "x"}}, error(-32602));
      out += line(notification("subagent/started", {{"parentId", "p"}, {"childId", "n-" + n}}));
      ++started_children;
      out += line(notification("subagent/progress", {{"parentId", "p"}, {"childId", "k-" + n}, {"text", "busy"}}));
      out += line(notification("no/such/method", {}));
      out += "{not json\n";
      ++parse_errors;
    }
  };
  small_ones(before, "a", 1500);
  std::string after;
  ask(after, "done", "subagent/completed",
      {{"parentId", "p"}, {"childId", "slow"}, {"status", "done"}, {"finalText", numbered_report(200000, 3000)}},
      [](const json& r) {
        expect_result(r);
        CHECK(r["result"]["duplicate"] == false);
        CHECK(r["result"]["bytes"] == 200000);
      });
  // Asked while the wait's answer removes its result from the queue: some of these statuses
  // wait for that (the coroutine path), the rest are answered at once.
  small_ones(after, "b", 1500);
  c.send_raw(before + after);
  collect(c, expected, parse_errors);

  // The notifications took effect too: every started child is running but "slow", delivered.
  json st = c.call("daemon/status", nullptr);
  REQUIRE_MESSAGE(st.contains("result"), st.dump());
  CHECK(st["result"]["children"]["running"] == started_children);
  CHECK(st["result"]["children"]["delivered"] == 1);
}

TEST_CASE("a client that stops sending still gets every pipelined reply, then the connection closes") {
  daemon_process d;
  raw_client c(d.socket());
  std::map<std::string, expectation> expected;
  std::string batch;
  for (int i = 0; i < 500; ++i) {
    const json id = "st-" + std::to_string(i);
    batch += line(i % 10 == 0 ? request(id, "daemon/status")
                              : request(id, "subagent/started", {{"parentId", "q"}, {"childId", id}}));
    expected[id.dump()] = i % 10 == 0 ? status() : running();
  }
  // One request on the coroutine path whose reply comes last, when its 300 ms are up.
  batch += line(request("s", "subagent/started", {{"parentId", "p"}, {"childId", "c"}}));
  expected["\"s\""] = running();
  batch += line(request("wait", "subagent/wait", {{"parentId", "p"}, {"childIds", {"c"}}, {"timeoutMs", 300}}));
  expected["\"wait\""] = [](const json& r) {
    expect_result(r);
    CHECK(r["result"]["timedOut"] == true);
    CHECK(r["result"]["pending"] == json::array({"c"}));
  };
  c.send_raw(batch);
  REQUIRE(::shutdown(c.fd(), SHUT_WR) == 0);
  collect(c, expected, 0);
  CHECK(c.closed_within(std::chrono::seconds(5)));
}

TEST_CASE("the daemon answers small requests while 128 others are in flight, and refuses a 129th that must wait") {
  daemon_process d;
  raw_client c(d.socket());
  std::map<std::string, expectation> expected;
  std::string batch = line(request("s", "subagent/started", {{"parentId", "p"}, {"childId", "c"}}));
  expected["\"s\""] = running();
  for (int i = 0; i < 128; ++i) {  // the cap (docs/protocol.md, limits): each stays open 1 s
    const json id = "w-" + std::to_string(i);
    batch += line(request(id, "subagent/wait", {{"parentId", "p"}, {"childIds", {"c"}}, {"timeoutMs", 1000}}));
    expected[id.dump()] = [](const json& r) {
      expect_result(r);
      CHECK(r["result"]["timedOut"] == true);
    };
  }
  batch += line(request("over", "subagent/check", {{"parentId", "p"}, {"childId", "c"}}));
  expected["\"over\""] = error(-32010);
  for (int i = 0; i < 10; ++i) {  // never in flight, so never over the cap
    const json id = "s-" + std::to_string(i);
    batch += line(request(id, "subagent/started", {{"parentId", "p"}, {"childId", id}}));
    expected[id.dump()] = running();
  }
  c.send_raw(batch);
  collect(c, expected, 0);
}

TEST_CASE("small requests as clients write them and as they may be written: the same answers, members in the shape's order") {
  daemon_process d;
  raw_client c(d.socket());
  // Read as text (the form clients write), then the same requests in forms that take the
  // parser: another member order, an escape, a string id.
  c.send_raw(R"({"jsonrpc":"2.0","id":1,"method":"subagent/started","params":{"parentId":"p","childId":"c"}})" "\n");
  c.send_raw(R"({"id":2,"jsonrpc":"2.0","method":"subagent/started","params":{"parentId":"p","childId":"c"}})" "\n");
  c.send_raw(R"({"jsonrpc":"2.0","id":"3","method":"subagent\/started","params":{"parentId":"\u0070","childId":"c"}})" "\n");
  const std::string answers[] = {*c.read_frame(), *c.read_frame(), *c.read_frame()};
  CHECK(answers[0] == R"({"jsonrpc":"2.0","id":1,"result":{"state":"running"}})");
  CHECK(answers[1] == R"({"jsonrpc":"2.0","id":2,"result":{"state":"running"}})");
  CHECK(answers[2] == R"({"jsonrpc":"2.0","id":"3","result":{"state":"running"}})");
  // Params the text reader declines get the parser's error, naming the member.
  c.send_raw(R"({"jsonrpc":"2.0","id":4,"method":"subagent/started","params":{"parentId":"p","childId":""}})" "\n");
  const json refused = json::parse(*c.read_frame());
  CHECK(refused["error"]["code"] == -32602);
  CHECK(refused["error"]["message"].get<std::string>().rfind("childId: ", 0) == 0);
  // A result is written member by member in the order its shape lists them (nlohmann sorted them).
  c.send_raw(R"({"jsonrpc":"2.0","id":5,"method":"daemon/status"})" "\n");
  const std::string status = *c.read_frame();
  CHECK(status.rfind(R"({"jsonrpc":"2.0","id":5,"result":{"version":")", 0) == 0);
  CHECK(status.find(R"("queue":{"dir":)") != std::string::npos);
}
