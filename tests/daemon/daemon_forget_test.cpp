// Forgetting (--forget-after-ms) against a real handoffd: a parent that hung up with nothing
// pending leaves the daemon's memory after the grace period, a live parent's settled children
// too; what was delivered is then answered `forgotten`, never an error, and never delivered again.
#include <doctest/doctest.h>

#include <thread>

#include "support/daemon_process.hpp"
#include "support/raw_client.hpp"

using namespace handoff::test;

namespace {

constexpr auto grace_ms = 1000;  // the daemon's --forget-after-ms in these tests

json result_of(raw_client& c, std::string_view method, const json& params) {
  json r = c.call(method, params);
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  return r["result"];
}

void complete(raw_client& c, const std::string& parent, const std::string& child, const std::string& text) {
  result_of(c, "subagent/completed", {{"parentId", parent}, {"childId", child}, {"status", "done"}, {"finalText", text}});
}

// Polls daemon/status until `parents` is `expected` (true) or `within` passed (false).
bool parents_become(raw_client& c, std::size_t expected, std::chrono::milliseconds within) {
  const auto give_up = std::chrono::steady_clock::now() + within;
  for (;;) {
    if (result_of(c, "daemon/status", nullptr)["parents"] == expected) return true;
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the poll interval
  }
}

}  // namespace

TEST_CASE("a parent that hung up is forgotten after the grace, its delivered children then read as forgotten") {
  daemon_process d({"--forget-after-ms", std::to_string(grace_ms)});
  raw_client w(d.socket());
  result_of(w, "initialize", {{"clientName", "worker"}});
  {
    raw_client p(d.socket());
    result_of(p, "initialize", {{"clientName", "parent"}, {"parentId", "p"}});
    complete(w, "p", "c1", "the result\n");
    // Waited on the parent's own connection: the daemon does not ask it for its usage meanwhile.
    json waited = result_of(p, "subagent/wait", {{"parentId", "p"}, {"childIds", {"c1"}}, {"timeoutMs", 5000}});
    REQUIRE(waited["sections"].size() == 1);
  }  // the parent hangs up
  // Within the grace it is still known: a wait hears alreadyDelivered.
  json again = result_of(w, "subagent/wait", {{"parentId", "p"}, {"childIds", {"c1"}}, {"timeoutMs", 0}});
  CHECK(again["alreadyDelivered"] == json{"c1"});
  CHECK(again["sections"].empty());

  REQUIRE(parents_become(w, 0, std::chrono::milliseconds(grace_ms * 5)));
  json forgotten = result_of(w, "subagent/wait", {{"parentId", "p"}, {"childIds", {"c1"}}, {"timeoutMs", 0}});
  CHECK(forgotten["forgotten"] == json{"c1"});
  CHECK(forgotten["sections"].empty());
  CHECK(forgotten["timedOut"] == false);
  CHECK(result_of(w, "subagent/check", {{"parentId", "p"}, {"childId", "c1"}})["state"] == "forgotten");
  // An id it never knew is still an error.
  json never = w.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"c1", "never"}}});
  REQUIRE(never.contains("error"));
  CHECK(never["error"]["code"] == -32001);
  // A resend of the forgotten completion is recognised, not delivered again.
  json resend = result_of(w, "subagent/completed",
                          {{"parentId", "p"}, {"childId", "c1"}, {"status", "done"}, {"finalText", "the result\n"}});
  CHECK(resend["duplicate"] == true);
  json after = result_of(w, "subagent/wait", {{"parentId", "p"}, {"childIds", {"c1"}}, {"timeoutMs", 0}});
  CHECK(after["alreadyDelivered"] == json{"c1"});
  CHECK(after["sections"].empty());
  // A completion of the forgotten child with another text is a conflict, and leaves nothing
  // running behind it (the parent would never be forgotten again).
  REQUIRE(parents_become(w, 0, std::chrono::milliseconds(grace_ms * 5)));
  json other = w.call("subagent/completed", {{"parentId", "p"}, {"childId", "c1"}, {"status", "done"}, {"finalText", "another\n"}});
  REQUIRE(other.contains("error"));
  CHECK(other["error"]["code"] == -32006);
  CHECK(result_of(w, "subagent/check", {{"parentId", "p"}, {"childId", "c1"}})["state"] == "forgotten");
  CHECK(result_of(w, "daemon/status", nullptr)["children"]["running"] == 0);
}

TEST_CASE("a connected parent stays, its settled children are forgotten, its held ones kept") {
  daemon_process d({"--forget-after-ms", std::to_string(grace_ms)});
  raw_client p(d.socket());
  result_of(p, "initialize", {{"clientName", "parent"}, {"parentId", "p"}});
  complete(p, "p", "taken", "first\n");
  complete(p, "p", "held", "second\n");
  REQUIRE(result_of(p, "subagent/wait", {{"parentId", "p"}, {"childIds", {"taken"}}})["sections"].size() == 1);
  // Once "taken" is forgotten the grace has passed since the parent last changed (its results
  // came before "taken" was delivered): a parent not connected would be forgotten too by now.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms * 7);
  while (result_of(p, "subagent/check", {{"parentId", "p"}, {"childId", "taken"}})["state"] != "forgotten") {
    REQUIRE(std::chrono::steady_clock::now() < give_up);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the poll interval
  }
  CHECK(result_of(p, "subagent/check", {{"parentId", "p"}, {"childId", "held"}})["state"] == "completed");
  json status = result_of(p, "daemon/status", nullptr);
  CHECK(status["parents"] == 1);
  CHECK(status["children"]["completed"] == 1);
  CHECK(status["children"]["delivered"] == 0);
  // The held result is still delivered, once.
  json last = result_of(p, "subagent/wait", {{"parentId", "p"}, {"childIds", {"held", "taken"}}});
  REQUIRE(last["sections"].size() == 1);
  CHECK(last["sections"][0]["childId"] == "held");
  CHECK(last["forgotten"] == json{"taken"});
}

TEST_CASE("--forget-after-ms out of range is refused at start") {
  for (const char* bad : {"0", "2592000001"}) {
    CAPTURE(bad);
    CHECK_THROWS(daemon_process({"--forget-after-ms", bad}, std::chrono::milliseconds(2000)));
  }
}
