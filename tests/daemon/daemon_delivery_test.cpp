// Auto-delivery against a real handoffd: idle -> context/usage -> parent/deliver -> ack.
#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <thread>

#include "support/daemon_process.hpp"
#include "support/raw_client.hpp"

using namespace handoff::test;

namespace {

void complete(raw_client& c, const std::string& parent, const std::string& child, const std::string& text) {
  json r = c.call("subagent/completed", {{"parentId", parent}, {"childId", child}, {"status", "done"},
                                         {"finalText", text}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
}

// Reads the next daemon -> client request of `method`.
json expect_request(raw_client& c, const std::string& method, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  json m = c.read(timeout);
  REQUIRE_MESSAGE(m.value("method", "") == method, m.dump());
  REQUIRE(m.contains("id"));
  return m;
}

void answer(raw_client& c, const json& request, const json& result) {
  c.send({{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", result}});
}

raw_client& register_parent(raw_client& c, const std::string& parent) {
  json r = c.call("initialize", {{"parentId", parent}, {"clientName", "test-parent"}});
  REQUIRE(r["result"]["parentId"] == parent);
  return c;
}

// One delivery: answer usage, return the deliver request (not acknowledged yet).
json next_delivery(raw_client& parent, const json& usage) {
  json ask = expect_request(parent, "context/usage");
  CHECK(ask["params"]["parentId"].is_string());
  answer(parent, ask, usage);
  return expect_request(parent, "parent/deliver");
}

std::size_t queued(raw_client& c) { return c.call("daemon/status", nullptr)["result"]["queue"]["results"]; }

}  // namespace

TEST_CASE("idle parent: usage asked, batch delivered, acknowledged, queue emptied") {
  daemon_process d;
  raw_client parent(d.socket()), worker(d.socket());
  register_parent(parent, "p");
  complete(worker, "p", "a", numbered_report(30000, 300, "a"));
  complete(worker, "p", "b", "short result b");
  parent.notify("parent/state", {{"parentId", "p"}, {"state", "idle"}});

  json deliver = next_delivery(parent, {{"tokens", 1000}, {"contextWindow", 200000}, {"percent", 0.5}});
  const json& p = deliver["params"];
  CHECK(p["parentId"] == "p");
  CHECK(p["deliveryId"].get<std::string>().size() > 4);
  REQUIRE(p["sections"].size() == 2);
  CHECK(p["budget"]["mode"] == "dynamic");
  CHECK(p["text"].get<std::string>().size() <= 48 * 1024);
  CHECK(p["sections"][0]["text"].get<std::string>().find("END a") != std::string::npos);
  CHECK(p["sections"][1]["text"] == "short result b");
  CHECK(queued(worker) == 2);  // not acknowledged yet
  answer(parent, deliver, json::object());
  for (int i = 0; i < 100 && queued(worker) != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll, 2 s
  CHECK(queued(worker) == 0);
  CHECK(worker.call("subagent/check", {{"parentId", "p"}, {"childId", "a"}})["result"]["state"] == "delivered");

  // A later wait on the delivered children says where their results went instead of nothing.
  worker.call("subagent/started", {{"parentId", "p"}, {"childId", "c"}});
  worker.call("subagent/cancel", {{"parentId", "p"}, {"childIds", {"c"}}});
  json w = worker.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"a", "b", "c"}}, {"timeoutMs", 0}})["result"];
  CHECK(w["sections"].empty());
  CHECK(w["alreadyDelivered"] == json::array({"a", "b"}));
  CHECK(w["cancelled"] == json::array({"c"}));
  CHECK(w["pending"].empty());
}

TEST_CASE("a completion arriving while the parent is idle is delivered without another event") {
  daemon_process d;
  raw_client parent(d.socket()), worker(d.socket());
  register_parent(parent, "p");
  parent.notify("parent/state", {{"parentId", "p"}, {"state", "idle"}});
  // parent/state takes effect as it is read, before the next frame (docs/protocol.md): once the
  // status sent after it is answered, the parent is idle.
  REQUIRE(parent.call("daemon/status", nullptr).contains("result"));
  complete(worker, "p", "late", "late result");
  json deliver = next_delivery(parent, nullptr);
  CHECK(deliver["params"]["sections"][0]["childId"] == "late");
  CHECK(deliver["params"]["budget"]["mode"] == "static");
  answer(parent, deliver, json::object());
}

TEST_CASE("low headroom shrinks every share, unknown usage falls back to the static caps") {
  auto shares = [](const json& usage, bool reply) {
    daemon_process d({"--usage-timeout-ms", "300"});
    raw_client parent(d.socket()), worker(d.socket());
    register_parent(parent, "p");
    for (int i = 0; i < 3; ++i) complete(worker, "p", "c" + std::to_string(i), numbered_report(40000, 400, std::to_string(i)));
    parent.notify("parent/state", {{"parentId", "p"}, {"state", "idle"}});
    json ask = expect_request(parent, "context/usage");
    if (reply) answer(parent, ask, usage);  // else: let it time out
    json deliver = expect_request(parent, "parent/deliver");
    answer(parent, deliver, json::object());
    std::vector<std::size_t> sizes;
    for (const auto& s : deliver["params"]["sections"]) sizes.push_back(s["text"].get<std::string>().size());
    return std::make_pair(deliver["params"]["budget"], sizes);
  };
  auto [roomy_budget, roomy] = shares({{"tokens", 10000}, {"contextWindow", 200000}, {"percent", 5.0}}, true);
  auto [tight_budget, tight] = shares({{"tokens", 180000}, {"contextWindow", 200000}, {"percent", 90.0}}, true);
  auto [null_budget, null_tokens] = shares({{"tokens", nullptr}, {"contextWindow", 200000}, {"percent", nullptr}}, true);
  auto [none_budget, none] = shares(nullptr, true);
  auto [timeout_budget, timed_out] = shares(nullptr, false);
  auto [nonsense_budget, nonsense] = shares({{"tokens", "many"}, {"contextWindow", 200000}}, true);

  CHECK(roomy_budget["mode"] == "dynamic");
  CHECK(tight_budget["mode"] == "dynamic");
  CHECK(tight_budget["batchCapBytes"].get<std::size_t>() < roomy_budget["batchCapBytes"].get<std::size_t>());
  REQUIRE(roomy.size() == 3);
  REQUIRE(tight.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(tight[i] < roomy[i]);
  for (const json* b : {&null_budget, &none_budget, &timeout_budget, &nonsense_budget}) {
    CHECK((*b)["mode"] == "static");
    CHECK((*b)["batchCapBytes"] == 48 * 1024);
  }
  CHECK(null_tokens == none);
  CHECK(none == timed_out);
  CHECK(none == nonsense);
}

TEST_CASE("30 pending long results are split across flushes, none cut below the floor") {
  daemon_process d;
  raw_client parent(d.socket()), worker(d.socket());
  register_parent(parent, "p");
  for (int i = 0; i < 30; ++i) complete(worker, "p", "c" + std::to_string(i), numbered_report(40000, 400, "c" + std::to_string(i)));
  parent.notify("parent/state", {{"parentId", "p"}, {"state", "idle"}});
  std::size_t delivered = 0, flushes = 0;
  std::set<std::string> seen;
  while (delivered < 30 && flushes < 40) {
    json deliver = next_delivery(parent, nullptr);
    ++flushes;
    const json& p = deliver["params"];
    CHECK(p["text"].get<std::string>().size() <= 48 * 1024);
    for (const auto& s : p["sections"]) {
      CHECK(s["text"].get<std::string>().size() >= 2048 - 128);  // the floor, minus less than a ~100-byte line
      CHECK(seen.insert(s["childId"].get<std::string>()).second);
      ++delivered;
    }
    if (delivered < 30) CHECK(p["deferred"].get<std::size_t>() == 30 - delivered);
    answer(parent, deliver, json::object());
  }
  CHECK(delivered == 30);
  CHECK(flushes > 1);
}

TEST_CASE("an unacknowledged delivery is resent with the same id after the parent reconnects") {
  daemon_process d;
  std::string first_id;
  {
    raw_client parent(d.socket()), worker(d.socket());
    register_parent(parent, "p");
    complete(worker, "p", "a", "result a");
    parent.notify("parent/state", {{"parentId", "p"}, {"state", "idle"}});
    json deliver = next_delivery(parent, nullptr);
    first_id = deliver["params"]["deliveryId"];
    // Disconnect without acknowledging.
  }
  raw_client parent(d.socket());
  register_parent(parent, "p");
  json again = expect_request(parent, "parent/deliver");
  CHECK(again["params"]["deliveryId"] == first_id);
  CHECK(again["params"]["sections"][0]["text"] == "result a");
  answer(parent, again, json::object());
  raw_client probe(d.socket());
  for (int i = 0; i < 100 && queued(probe) != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll, 2 s
  CHECK(queued(probe) == 0);
}

TEST_CASE("an error reply leaves a delivery queued, its resend is the same bytes, and any result acknowledges it") {
  daemon_process d;
  raw_client worker(d.socket());
  // The params of a parent/deliver frame, as the bytes the daemon sent.
  auto sent_params = [](raw_client& parent) {
    const std::optional<std::string> frame = parent.read_frame();
    REQUIRE(frame.has_value());
    CHECK(json::parse(*frame)["method"] == "parent/deliver");
    const std::size_t at = frame->find(R"(,"params":)");
    REQUIRE(at != std::string::npos);
    return std::make_pair(json::parse(*frame)["id"], frame->substr(at + 10, frame->rfind('}') - at - 10));
  };
  std::string first;
  {
    raw_client parent(d.socket());
    register_parent(parent, "p");
    complete(worker, "p", "a", numbered_report(30000, 300, "a"));
    parent.notify("parent/state", {{"parentId", "p"}, {"state", "idle"}});
    answer(parent, expect_request(parent, "context/usage"), nullptr);
    auto [id, params] = sent_params(parent);
    first = params;
    CHECK(json::parse(first)["sections"][0]["childId"] == "a");
    parent.send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", -32000}, {"message", "not now"}}}});
    // Still unacknowledged: the daemon/status after the error reply is read after it.
    CHECK(parent.call("daemon/status", nullptr)["result"]["queue"]["deliveries"] == 1);
  }
  raw_client parent(d.socket());
  register_parent(parent, "p");
  auto [id, again] = sent_params(parent);
  CHECK(again == first);
  parent.send({{"jsonrpc", "2.0"}, {"id", id}, {"result", true}});  // not {}: any result will do
  for (int i = 0; i < 100 && queued(worker) != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(queued(worker) == 0);
  CHECK(worker.call("subagent/check", {{"parentId", "p"}, {"childId", "a"}})["result"]["state"] == "delivered");
}

TEST_CASE("a result acknowledged by completed survives kill -9 and is delivered after restart") {
  daemon_process d;
  std::string text = numbered_report(50000, 500, "durable");
  {
    raw_client worker(d.socket());
    complete(worker, "p", "a", text);
  }
  d.kill_hard();
  d.start();
  raw_client parent(d.socket());
  register_parent(parent, "p");
  parent.notify("parent/state", {{"parentId", "p"}, {"state", "idle"}});
  json deliver = next_delivery(parent, nullptr);
  REQUIRE(deliver["params"]["sections"].size() == 1);
  const json& s = deliver["params"]["sections"][0];
  CHECK(s["childId"] == "a");
  CHECK(s["totalBytes"] == 50000);
  CHECK(s["text"].get<std::string>().find("END durable") != std::string::npos);
  CHECK(file_sha256(s["artifact"]["path"].get<std::string>()) == s["artifact"]["sha256"]);
  answer(parent, deliver, json::object());
}

TEST_CASE("an unacknowledged delivery survives kill -9 and is resent with the same id") {
  daemon_process d;
  std::string id;
  {
    raw_client parent(d.socket()), worker(d.socket());
    register_parent(parent, "p");
    complete(worker, "p", "a", "result a");
    parent.notify("parent/state", {{"parentId", "p"}, {"state", "idle"}});
    id = next_delivery(parent, nullptr)["params"]["deliveryId"];
    d.kill_hard();
  }
  d.start();
  raw_client parent(d.socket());
  register_parent(parent, "p");
  json again = expect_request(parent, "parent/deliver");
  CHECK(again["params"]["deliveryId"] == id);
  answer(parent, again, json::object());
}

TEST_CASE("SIGTERM during a wait: the waiter is answered shutting_down, then the daemon exits 0 without the grace period") {
  daemon_process d;
  raw_client idle(d.socket()), waiter(d.socket());
  idle.call("daemon/status", json::object());
  waiter.call("subagent/started", {{"parentId", "p"}, {"childId", "slow"}});
  waiter.send({{"jsonrpc", "2.0"}, {"id", 7}, {"method", "subagent/wait"},
               {"params", {{"parentId", "p"}, {"childIds", {"slow"}}}}});
  // Requests on one connection start in order, and a wait parks before its first suspension:
  // once a later request on that connection is answered, the wait is parked.
  REQUIRE(waiter.call("subagent/check", {{"parentId", "p"}, {"childId", "slow"}})["result"]["state"] == "running");
  const auto asked = std::chrono::steady_clock::now();
  CHECK(d.stop() == 0);
  CHECK(std::chrono::steady_clock::now() - asked < std::chrono::seconds(2));
  json answer = waiter.read(std::chrono::seconds(5));
  CHECK(answer["id"] == 7);
  CHECK(answer["error"]["code"] == -32008);
}

TEST_CASE("SIGTERM exits 0 and loses nothing acknowledged") {
  daemon_process d;
  {
    raw_client worker(d.socket());
    complete(worker, "p", "a", "kept across a clean stop");
  }
  // No connection is open, so nothing needs the 5 s grace period: the daemon stops at once.
  const auto asked = std::chrono::steady_clock::now();
  CHECK(d.stop() == 0);
  CHECK(std::chrono::steady_clock::now() - asked < std::chrono::seconds(2));
  CHECK_FALSE(std::filesystem::exists(d.socket()));
  d.start();
  raw_client c(d.socket());
  json s = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"a"}}, {"timeoutMs", 1000}})["result"]["sections"];
  REQUIRE(s.size() == 1);
  CHECK(s[0]["text"] == "kept across a clean stop");
}
