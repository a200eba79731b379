// The C++ client library against a real handoffd: every client -> daemon method round trip,
// typed, and the daemon's errors as client_error values.
#include <doctest/doctest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/fs/sha256.hpp"
#include "handoff/client.hpp"
#include "support/daemon_process.hpp"
#include "support/daemon_status.hpp"
#include "support/raw_client.hpp"

using namespace handoff;
using handoff::client::connection;
using handoff::client::client_error;
using handoff::client::error_kind;

namespace {

connection connect_to(const test::daemon_process& d) {
  client::options o;
  o.socket = d.socket();
  return connection(o);
}

rpc::completed_params completion(const std::string& parent, const std::string& child, const std::string& text) {
  rpc::completed_params p;
  p.parent_id = parent;
  p.child_id = child;
  p.title = "title of " + child;
  p.status = "done";
  p.final_text = text;
  return p;
}

rpc::started_params start(const std::string& parent, const std::string& child) {
  rpc::started_params p;
  p.parent_id = parent;
  p.child_id = child;
  p.title = "title of " + child;
  return p;
}

// Lines first..first+count-1 (1-based) of `text`, split on "\n" as Pi's read does.
std::string lines_of(const std::string& text, std::size_t first, std::size_t count) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (std::size_t i = first; i < first + count; ++i) out += (i == first ? "" : "\n") + lines.at(i - 1);
  return out;
}

// The error `f` throws; fails the test when it throws none.
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

}  // namespace

TEST_CASE("initialize reports the daemon's protocol, version, artifact dir and limits") {
  test::daemon_process d;
  connection c = connect_to(d);
  rpc::initialize_params hello;
  hello.client_name = "client_calls_test";
  const auto r = c.initialize(hello);
  CHECK(r.protocol_version == "1");
  CHECK_FALSE(r.server_version.empty());
  CHECK_FALSE(r.parent_id.has_value());
  CHECK(r.artifact_dir == d.artifact_dir().string());
  CHECK(r.limits.at("maxChildIds") == 64);
  CHECK(c.socket_path() == d.socket());
}

TEST_CASE("started, progress and check: a running child and its activity") {
  test::daemon_process d;
  connection c = connect_to(d);
  CHECK(c.started(start("p", "c1")).state == "running");
  rpc::progress_params progress;
  progress.parent_id = "p";
  progress.child_id = "c1";
  progress.text = "reading the sources\nwriting the tests";
  c.progress(progress);

  rpc::check_params which;
  which.parent_id = "p";
  which.child_id = "c1";
  const auto r = c.check(which);
  CHECK(r.child_id == "c1");
  CHECK(r.title == "title of c1");
  CHECK(r.state == "running");
  CHECK(r.status.empty());
  CHECK_FALSE(r.bytes.has_value());
  CHECK(r.preview.find("writing the tests") != std::string::npos);
}

TEST_CASE("completed is durable and idempotent, a different text for the same child conflicts") {
  test::daemon_process d;
  connection c = connect_to(d);
  const std::string text = "line one\nline two\nthe verdict: ship it";
  const auto first = c.completed(completion("p", "c1", text));
  CHECK_FALSE(first.duplicate);
  CHECK(first.sha256 == sha256_hex(text));
  CHECK(first.bytes == text.size());
  CHECK(first.lines == 3);
  CHECK(c.completed(completion("p", "c1", text)).duplicate);

  const client_error e = error_of([&] { c.completed(completion("p", "c1", "another text")); });
  CHECK(e.kind() == error_kind::rpc);
  CHECK(e.code() == rpc::errc::conflict);

  rpc::check_params which;
  which.parent_id = "p";
  which.child_id = "c1";
  const auto r = c.check(which);
  CHECK(r.state == "completed");
  CHECK(r.status == "done");
  CHECK(r.bytes == text.size());
  CHECK(r.lines == 3);
  CHECK(r.preview.find("the verdict: ship it") != std::string::npos);
  CHECK(c.daemon_status().queue.results == 1);
}

TEST_CASE("wait returns the projected batch, read_artifact pages the omitted middle exactly") {
  test::daemon_process d;
  connection c = connect_to(d);
  const std::string long_text = test::numbered_report(40000, 400, "long");
  c.completed(completion("p", "long", long_text));
  c.completed(completion("p", "short", "short and complete"));

  rpc::wait_params w;
  w.parent_id = "p";
  w.child_ids = {"long", "short"};
  const auto r = c.wait(w);
  CHECK_FALSE(r.timed_out);
  CHECK(r.pending.empty());
  CHECK(r.batch.deferred == 0);
  CHECK(r.batch.budget.mode == "static");
  REQUIRE(r.batch.sections.size() == 2);
  CHECK(r.batch.text.find("short and complete") != std::string::npos);

  const rpc::section_dto& cut = r.batch.sections[0].child_id == "long" ? r.batch.sections[0] : r.batch.sections[1];
  CHECK(cut.truncated);
  CHECK(cut.total_bytes == long_text.size());
  CHECK(cut.total_lines == 400);
  REQUIRE(cut.artifact.has_value());
  CHECK(cut.artifact->saved);
  CHECK(cut.artifact->sha256 == sha256_hex(long_text));
  REQUIRE(cut.omitted_offset.has_value());
  REQUIRE(cut.omitted_limit.has_value());

  rpc::artifact_read_params page;
  page.sha256 = cut.artifact->sha256;
  page.offset = *cut.omitted_offset;
  page.limit = *cut.omitted_limit;
  const auto middle = c.read_artifact(page);
  CHECK(middle.path == cut.artifact->path);
  CHECK(middle.first_line == *cut.omitted_offset);
  CHECK(middle.last_line == *cut.omitted_offset + *cut.omitted_limit - 1);
  CHECK(middle.total_lines == 400);
  CHECK(middle.text == lines_of(long_text, *cut.omitted_offset, *cut.omitted_limit));

  // Consumed by the wait: nothing left in the queue.
  CHECK(c.daemon_status().queue.results == 0);
}

TEST_CASE("wait with a usage gets a dynamic budget, with a timeout it reports what is pending") {
  test::daemon_process d;
  connection c = connect_to(d);
  c.started(start("p", "slow"));
  c.completed(completion("p", "fast", "fast result"));

  rpc::wait_params w;
  w.parent_id = "p";
  w.child_ids = {"fast", "slow"};
  w.timeout_ms = 300;
  rpc::usage_dto usage;
  usage.tokens = 100000;
  usage.context_window = 200000;
  usage.percent = 50.0;
  w.usage = usage;
  const auto r = c.wait(w);
  CHECK(r.timed_out);
  CHECK(r.pending == std::vector<std::string>{"slow"});
  CHECK(r.batch.budget.mode == "dynamic");
  REQUIRE(r.batch.budget.usage.has_value());
  CHECK(r.batch.budget.usage->tokens == 100000);
  REQUIRE(r.batch.sections.size() == 1);
  CHECK(r.batch.sections[0].text == "fast result");
}

TEST_CASE("a wait given a cancel_signal: raised while asleep or before the call, nothing is taken") {
  test::daemon_process d;
  connection c = connect_to(d);
  c.started(start("p", "slow"));
  rpc::wait_params w;
  w.parent_id = "p";
  w.child_ids = {"slow"};
  auto cancelled = [](const client_error& e) {
    return e.kind() == error_kind::rpc && e.code() == rpc::errc::request_cancelled;
  };

  // Raised once the wait is asleep in handoffd (the "before the call" case follows).
  client::cancel_signal from_thread;
  bool asleep = false;
  std::thread raiser([&] {
    asleep = test::waits_asleep(d.socket(), 1);
    from_thread.raise();
  });
  bool thrown = false;
  try {
    c.wait(w, from_thread);
  } catch (const client_error& e) {
    thrown = cancelled(e);
  }
  raiser.join();
  CHECK(asleep);
  CHECK(thrown);

  client::cancel_signal already;
  already.raise();
  thrown = false;
  try {
    c.wait(w, already);
  } catch (const client_error& e) {
    thrown = cancelled(e);
  }
  CHECK(thrown);

  // The connection goes on, and the result, once there, is still the next wait's.
  c.completed(completion("p", "slow", "slow result"));
  client::cancel_signal unused;
  const auto r = c.wait(w, unused);
  REQUIRE(r.batch.sections.size() == 1);
  CHECK(r.batch.sections[0].text == "slow result");
  CHECK_FALSE(unused.raised());
}

TEST_CASE("cancel consumes completed results and reports the ids it knew") {
  test::daemon_process d;
  connection c = connect_to(d);
  c.started(start("p", "running"));
  c.completed(completion("p", "done", "a result nobody wants"));
  rpc::cancel_params p;
  p.parent_id = "p";
  p.child_ids = {"running", "done", "never-heard-of"};
  const auto r = c.cancel(p);
  CHECK(r.cancelled == std::vector<std::string>{"running", "done"});
  CHECK(r.consumed == 1);
  CHECK(c.daemon_status().queue.results == 0);
}

TEST_CASE("the daemon's refusals arrive as rpc errors with their codes, and the connection lives on") {
  test::daemon_process d;
  connection c = connect_to(d);
  rpc::check_params which;
  which.parent_id = "nobody";
  which.child_id = "c";
  const client_error unknown = error_of([&] { c.check(which); });
  CHECK(unknown.kind() == error_kind::rpc);
  CHECK(unknown.code() == rpc::errc::unknown_parent);
  CHECK(std::string(unknown.what()).find("nobody") != std::string::npos);

  rpc::artifact_read_params page;
  page.sha256 = std::string(64, 'a');
  CHECK(error_of([&] { c.read_artifact(page); }).code() == rpc::errc::not_found);

  const client_error bad = error_of([&] { c.call("subagent/started", {{"parentId", "p"}}); });
  CHECK(bad.code() == rpc::errc::invalid_params);
  CHECK(std::string(bad.what()).find("childId") != std::string::npos);

  CHECK(error_of([&] { c.call("no/such/method", nullptr); }).code() == rpc::errc::method_not_found);
  CHECK_FALSE(c.daemon_status().version.empty());
}

TEST_CASE("a long final text, sent in pieces as it is escaped, arrives byte for byte") {
  test::daemon_process d;
  connection c = connect_to(d);
  // Over the size sent in pieces, with 2-, 3- and 4-byte characters, escapes and control bytes
  // at every offset, so the 64 KiB piece boundaries fall inside characters and next to escapes.
  const std::string units[] = {"plain text ", "\"quoted\" ", "back\\slash ", "\n", "\t", "\x01\x1f",
                               "\xc3\xa9", "\xe4\xbd\xa0", "\xf0\x9f\x98\x80"};
  std::string text;
  for (std::size_t i = 0; text.size() < 1'200'000; ++i) text += units[(i * 7 + i / 3) % std::size(units)];
  const rpc::completed_result r = c.completed(completion("p", "long", text));
  CHECK(r.sha256 == sha256_hex(text));
  CHECK(r.bytes == text.size());
  // The connection is still in step: the next call is answered.
  CHECK(c.daemon_status().queue.results == 1);
}

TEST_CASE("a long final text whose last character is not UTF-8 is refused before anything is sent") {
  test::daemon_process d;
  connection c = connect_to(d);
  std::string text(600'000, 'x');
  text += "\xe4\xbd";  // a 3-byte character cut short, at the very end
  try {
    c.completed(completion("p", "c", text));
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("subagent/completed: not sent, a string in it is not valid UTF-8") == 0);
  }
  CHECK(c.daemon_status().queue.results == 0);
  CHECK_FALSE(c.completed(completion("p", "c", "fine")).duplicate);  // nothing half sent
}

TEST_CASE("a final text that is not UTF-8 is refused before anything is sent") {
  test::daemon_process d;
  connection c = connect_to(d);
  CHECK_THROWS_AS(c.completed(completion("p", "c", std::string("ok\xff\xfe", 4))), std::invalid_argument);
  CHECK(c.daemon_status().queue.results == 0);
  CHECK_FALSE(c.completed(completion("p", "c", "fine")).duplicate);  // the connection is still in step
}
