// The client library as a parent's endpoint against a real handoffd: context/usage answered
// from a callback, parent/deliver received and acknowledged only when the callback returned,
// redelivered when it threw, and daemon requests handled while a call of our own is waiting.
#include <doctest/doctest.h>

#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "handoff/parent_endpoint.hpp"
#include "support/daemon_process.hpp"
#include "support/daemon_status.hpp"
#include "support/raw_client.hpp"

using namespace handoff;
using handoff::client::connection;
using handoff::client::parent_callbacks;
using handoff::client::parent_endpoint;
using std::chrono::milliseconds;

namespace {

connection connect_to(const test::daemon_process& d) {
  client::options o;
  o.socket = d.socket();
  return connection(o);
}

void complete(connection& c, const std::string& parent, const std::string& child, const std::string& text) {
  rpc::completed_params p;
  p.parent_id = parent;
  p.child_id = child;
  p.status = "done";
  p.final_text = text;
  c.completed(p);
}

// Serves daemon requests until `done()` holds; false if it did not within the timeout.
bool serve_until(connection& c, const std::function<bool()>& done, milliseconds timeout = milliseconds(10'000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    c.serve_one(left);
  }
  return true;
}

std::size_t queued_results(connection& c) { return c.daemon_status().queue.results; }

std::string state_of(connection& c, const std::string& parent, const std::string& child) {
  rpc::check_params p;
  p.parent_id = parent;
  p.child_id = child;
  return c.check(p).state;
}

// Polls until the daemon has dropped every queued result (it does so after the ack arrives).
bool queue_drains(connection& c) {
  for (int i = 0; i < 200; ++i) {
    if (queued_results(c) == 0) return true;
    std::this_thread::sleep_for(milliseconds(20));  // the poll interval
  }
  return false;
}

}  // namespace

TEST_CASE("an idle parent's endpoint answers usage, receives the batch, acknowledges it, the queue empties") {
  test::daemon_process d;
  connection worker = connect_to(d);
  complete(worker, "p", "long", test::numbered_report(60000, 600, "long"));
  complete(worker, "p", "short", "short result");

  connection c = connect_to(d);
  int usage_asked = 0;
  std::vector<rpc::deliver_params> got;
  parent_callbacks callbacks;
  callbacks.usage = [&] {
    ++usage_asked;
    rpc::usage_dto u;
    u.tokens = 190000;
    u.context_window = 200000;
    u.percent = 95.0;
    return std::optional(u);
  };
  callbacks.deliver = [&](const rpc::deliver_params& delivery) { got.push_back(delivery); };
  parent_endpoint parent(c, "p", callbacks);
  CHECK(parent.registration().parent_id == "p");
  parent.report_idle();

  REQUIRE(serve_until(c, [&] { return !got.empty(); }));
  CHECK(usage_asked == 1);
  const rpc::deliver_params& batch = got.front();
  CHECK(batch.parent_id == "p");
  CHECK_FALSE(batch.delivery_id.empty());
  CHECK(batch.batch.sections.size() == 2);
  // 5% of a 200k window left: the dynamic budget shrank the batch below the static 48 KiB.
  CHECK(batch.batch.budget.mode == "dynamic");
  REQUIRE(batch.batch.budget.usage.has_value());
  CHECK(batch.batch.budget.usage->tokens == 190000);
  CHECK(batch.batch.text.size() <= batch.batch.budget.batch_cap_bytes);
  CHECK(batch.batch.budget.batch_cap_bytes < batch.batch.budget.static_batch_bytes);
  CHECK(parent.deliveries_acknowledged() == 1);

  CHECK(queue_drains(worker));
  CHECK(state_of(worker, "p", "long") == "delivered");
  CHECK(worker.daemon_status().queue.deliveries == 0);
}

TEST_CASE("usage unknown (null) gives the static caps") {
  test::daemon_process d;
  connection c = connect_to(d);
  std::optional<rpc::deliver_params> got;
  parent_callbacks callbacks;
  callbacks.usage = [] { return std::optional<rpc::usage_dto>(); };
  callbacks.deliver = [&](const rpc::deliver_params& delivery) { got = delivery; };
  parent_endpoint parent(c, "p", callbacks);
  parent.report_idle();
  complete(c, "p", "c", "a result");  // on the endpoint's own connection: no difference
  REQUIRE(serve_until(c, [&] { return got.has_value(); }));
  CHECK(got->batch.budget.mode == "static");
  CHECK_FALSE(got->batch.budget.usage.has_value());
  CHECK(got->batch.text.find("a result") != std::string::npos);
}

TEST_CASE("a deliver callback that throws leaves the batch queued, it comes again with the same id") {
  test::daemon_process d;
  connection worker = connect_to(d);
  complete(worker, "p", "c", "the result that must not be lost");

  connection c = connect_to(d);
  std::vector<std::string> seen;  // deliveryIds, in order
  bool refuse = true;
  parent_callbacks callbacks;
  callbacks.deliver = [&](const rpc::deliver_params& delivery) {
    seen.push_back(delivery.delivery_id);
    if (refuse) throw std::runtime_error("the session is not ready");
  };
  parent_endpoint parent(c, "p", callbacks);
  parent.report_idle();
  REQUIRE(serve_until(c, [&] { return parent.deliveries_refused() == 1; }));
  CHECK(parent.deliveries_acknowledged() == 0);
  CHECK(queued_results(worker) == 1);
  CHECK(state_of(worker, "p", "c") == "delivering");

  refuse = false;
  parent.report_idle();  // the next idle resends what was never acknowledged
  REQUIRE(serve_until(c, [&] { return parent.deliveries_acknowledged() == 1; }));
  REQUIRE(seen.size() == 2);
  CHECK(seen[1] == seen[0]);
  CHECK(queue_drains(worker));
  CHECK(state_of(worker, "p", "c") == "delivered");
}

TEST_CASE("an unacknowledged delivery comes again to a new endpoint of the same parent") {
  test::daemon_process d;
  connection worker = connect_to(d);
  complete(worker, "p", "c", "resend me");
  std::string first_id;
  {
    connection c = connect_to(d);
    parent_callbacks callbacks;
    callbacks.deliver = [&](const rpc::deliver_params& delivery) {
      first_id = delivery.delivery_id;
      throw std::runtime_error("crashing before showing it");
    };
    parent_endpoint parent(c, "p", callbacks);
    parent.report_idle();
    REQUIRE(serve_until(c, [&] { return parent.deliveries_refused() == 1; }));
  }  // the endpoint's connection closes

  connection c = connect_to(d);
  std::optional<rpc::deliver_params> again;
  parent_callbacks callbacks;
  callbacks.deliver = [&](const rpc::deliver_params& delivery) { again = delivery; };
  parent_endpoint parent(c, "p", callbacks);  // no idle needed: registration alone resends
  REQUIRE(serve_until(c, [&] { return again.has_value(); }));
  CHECK(again->delivery_id == first_id);
  CHECK(again->batch.text.find("resend me") != std::string::npos);
  CHECK(queue_drains(worker));
}

TEST_CASE("daemon requests arriving while our own call waits are handled, not dropped") {
  test::daemon_process d;
  connection c = connect_to(d);
  int usage_asked = 0;
  std::vector<std::string> delivered_children;
  parent_callbacks callbacks;
  callbacks.usage = [&] {
    ++usage_asked;
    return std::optional<rpc::usage_dto>();
  };
  callbacks.deliver = [&](const rpc::deliver_params& delivery) {
    for (const auto& s : delivery.batch.sections) delivered_children.push_back(s.child_id);
  };
  parent_endpoint parent(c, "p", callbacks);
  rpc::started_params slow;
  slow.parent_id = "p";
  slow.child_id = "slow";
  c.started(slow);
  parent.report_idle();

  // While the endpoint sits in subagent/wait for "slow", another child completes: the daemon
  // auto-delivers it to this very connection, mid-call.
  bool asleep = false;
  std::thread other([&d, &asleep] {
    asleep = test::waits_asleep(d.socket(), 1);
    connection worker = connect_to(d);
    complete(worker, "p", "fast", "fast result");
  });
  rpc::wait_params w;
  w.parent_id = "p";
  w.child_ids = {"slow"};
  w.timeout_ms = 2000;
  const rpc::wait_result r = c.wait(w);
  other.join();

  CHECK(asleep);
  CHECK(r.timed_out);
  CHECK(r.pending == std::vector<std::string>{"slow"});
  CHECK(usage_asked == 1);
  CHECK(delivered_children == std::vector<std::string>{"fast"});
  CHECK(parent.deliveries_acknowledged() == 1);
  CHECK(queue_drains(c));
}

TEST_CASE("serve_one returns false when nothing arrives in time") {
  test::daemon_process d;
  connection c = connect_to(d);
  parent_endpoint parent(c, "p", {});
  const auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(c.serve_one(milliseconds(100)));
  CHECK(std::chrono::steady_clock::now() - started >= milliseconds(100));
}
