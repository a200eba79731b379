// `handoff watch` as a parent's endpoint against a real handoffd: it registers, reports idle,
// answers context/usage from its flags, prints each auto-delivered batch as the model reads
// it, and acknowledges it, after which the daemon's queue is empty.
#include <doctest/doctest.h>

#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "support/daemon_process.hpp"
#include "support/raw_client.hpp"

using namespace handoff::test;
using nlohmann::json;
using std::chrono::milliseconds;

namespace {

cli_result handoff_run(const daemon_process& d, const std::vector<std::string>& args, std::string input = {}) {
  return run_cli(on_socket(d.socket().string(), args), std::move(input));
}

void complete(const daemon_process& d, const std::string& parent, const std::string& child, const std::string& text) {
  const cli_result r = handoff_run(d, {"complete", "--parent", parent, "--child", child}, text);
  INFO(r.err);
  REQUIRE(r.status == 0);
}

json status(const daemon_process& d) { return json::parse(handoff_run(d, {"status", "--json"}).out); }

// The daemon drops results once the acknowledgement is in; that happens just after watch exits.
bool queue_drains(const daemon_process& d) {
  for (int i = 0; i < 200; ++i) {
    if (status(d)["queue"]["results"] == 0) return true;
    std::this_thread::sleep_for(milliseconds(20));  // the poll interval
  }
  return false;
}

}  // namespace

TEST_CASE("watch --once: a pending result is delivered on idle, printed under a header, acknowledged") {
  daemon_process d;
  complete(d, "p", "c", "the verdict: all tests pass");

  const cli_result r = handoff_run(d, {"watch", "--parent", "p", "--once"});
  INFO("stderr: ", r.err);
  CHECK(r.status == 0);
  const std::string header_start = "=== handoff delivery ";
  REQUIRE(r.out.find(header_start) == 0);
  const std::string header = r.out.substr(0, r.out.find('\n') + 1);
  CHECK(header.find(" for parent p: 1 result, 0 deferred, static budget ===\n") != std::string::npos);
  const std::string text = r.out.substr(header.size());
  CHECK(text.find("the verdict: all tests pass") != std::string::npos);
  CHECK(text.back() == '\n');

  CHECK(queue_drains(d));
  const json c = json::parse(handoff_run(d, {"check", "--parent", "p", "c", "--json"}).out);
  CHECK(c["state"] == "delivered");
}

TEST_CASE("watch --once --json, already waiting when the child completes: usage from the flags, one JSON line") {
  daemon_process d;
  cli_process watch(on_socket(d.socket().string(), {"watch", "--parent", "p", "--once", "--tokens", "1000",
                                                   "--context-window", "200000", "--json"}));
  REQUIRE(watch.wait_for_err("waiting for deliveries", milliseconds(10'000)));
  complete(d, "p", "late", numbered_report(30000, 300, "late"));

  const cli_result r = watch.finish();
  INFO("stderr: ", r.err);
  CHECK(r.status == 0);
  REQUIRE(!r.out.empty());
  CHECK(r.out.find('\n') == r.out.size() - 1);  // one line
  const json delivery = json::parse(r.out);
  CHECK(delivery["parentId"] == "p");
  CHECK(delivery["deliveryId"].get<std::string>().size() > 4);
  REQUIRE(delivery["sections"].size() == 1);
  CHECK(delivery["sections"][0]["childId"] == "late");
  CHECK(delivery["sections"][0]["truncated"] == true);
  CHECK(delivery["budget"]["mode"] == "dynamic");
  CHECK(delivery["budget"]["usage"]["tokens"] == 1000);
  CHECK(delivery["text"].get<std::string>().find("END late") != std::string::npos);
  CHECK(queue_drains(d));
}

TEST_CASE("watch without --once keeps serving: two deliveries, each acknowledged") {
  daemon_process d;
  cli_process watch(on_socket(d.socket().string(), {"watch", "--parent", "p", "--no-usage"}));
  REQUIRE(watch.wait_for_err("waiting for deliveries", milliseconds(10'000)));
  complete(d, "p", "one", "first result");
  REQUIRE(queue_drains(d));
  complete(d, "p", "two", "second result");
  REQUIRE(queue_drains(d));
  const cli_result r = watch.finish(milliseconds(200));  // still running: killed
  CHECK(r.status == -9);
  const auto first = r.out.find("=== handoff delivery ");
  const auto second = r.out.find("=== handoff delivery ", first + 1);
  CHECK(first == 0);
  REQUIRE(second != std::string::npos);
  CHECK(r.out.find("first result") < second);
  CHECK(r.out.find("second result") > second);
}
