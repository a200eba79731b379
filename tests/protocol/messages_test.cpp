// Typed params and results: strict decoding that names the field, the caps, the exact wire
// names, and encode -> decode round trips for both directions.
#include "protocol/messages.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "protocol/jsonrpc.hpp"

namespace {

namespace rpc = handoff::rpc;
using rpc::errc;
using rpc::json;
using rpc::rpc_error;

const rpc::wire_limits lim{};
const std::string sha_a(64, 'a');

// The invalid_params message a decode throws (fails the test when it does not throw).
std::string problem(const std::function<void()>& decode) {
  try {
    decode();
  } catch (const rpc_error& e) {
    CHECK(e.code == errc::invalid_params);
    CHECK(e.data.is_object());
    const std::string what = e.what();
    CHECK(what.rfind(e.data.value("field", std::string("?")) + ": ", 0) ==
          0);  // data names the field too
    return what;
  }
  FAIL("decoded without complaint");
  return {};
}

template <class Decode>
std::string problem_of(Decode decode, json params) {
  return problem([&] { decode(std::move(params), lim); });
}

// decode_params<T> as a value: from a moved json (the daemon's way) or a kept one.
template <class T>
constexpr auto decode_moved = [](json p, const rpc::wire_limits& l) { return rpc::decode_params<T>(std::move(p), l); };
template <class T>
constexpr auto decode_kept = [](json p, const rpc::wire_limits& l) {
  const json& kept = p;
  return rpc::decode_params<T>(kept, l);
};

json good_completed() {
  return {{"parentId", "p1"},  {"childId", "c1"},   {"title", "Review"},
          {"status", "error"}, {"error", "exit 1"}, {"finalText", "line 1\nline 2"}};
}

json good_usage() { return {{"tokens", 1200}, {"contextWindow", 200000}, {"percent", 0.6}}; }

rpc::batch_dto sample_batch() {
  rpc::batch_dto b;
  rpc::section_dto cut;
  cut.child_id = "c1";
  cut.title = "Audit";
  cut.status = "done";
  cut.text = "head\n[... middle omitted ...]\ntail";
  cut.truncated = true;
  cut.total_bytes = 36997;
  cut.total_lines = 422;
  cut.omitted_offset = 120;
  cut.omitted_limit = 250;
  cut.artifact = rpc::artifact_dto{true, "/tmp/store/" + sha_a + ".txt", sha_a, ""};
  rpc::section_dto unsaved = cut;
  unsaved.child_id = "c2";
  unsaved.status = "error";
  unsaved.error = "exit 2";
  unsaved.artifact =
      rpc::artifact_dto{false, "", std::string(64, 'b'), "ENOSPC: no space left on device"};
  rpc::section_dto whole;
  whole.child_id = "c3";
  whole.title = "";
  whole.status = "cancelled";
  whole.text = "short";
  whole.total_bytes = 5;
  whole.total_lines = 1;
  b.sections = {cut, unsaved, whole};
  b.text = "Subagent c1 \"Audit\" finished.\n\n...";
  b.deferred = 2;
  b.budget.mode = "dynamic";
  b.budget.basis = "dynamic: 50% of 180000 free tokens";
  b.budget.batch_cap_bytes = 40000;
  b.budget.static_batch_bytes = 49152;
  b.budget.per_result_bytes = 16384;
  b.budget.floor_bytes = 512;
  b.budget.max_lines = 600;
  b.budget.usage = rpc::usage_dto{20000, 200000, 10.0};
  b.budget.headroom_bytes = 360000;
  return b;
}

void check_same(const rpc::usage_dto& a, const rpc::usage_dto& b) {
  CHECK(a.tokens == b.tokens);
  CHECK(a.context_window == b.context_window);
  CHECK(a.percent == b.percent);
}

void check_same(const rpc::batch_dto& a, const rpc::batch_dto& b) {
  REQUIRE(a.sections.size() == b.sections.size());
  for (std::size_t i = 0; i < a.sections.size(); ++i) {
    const auto& x = a.sections[i];
    const auto& y = b.sections[i];
    CHECK(x.child_id == y.child_id);
    CHECK(x.title == y.title);
    CHECK(x.status == y.status);
    CHECK(x.error == y.error);
    CHECK(x.text == y.text);
    CHECK(x.truncated == y.truncated);
    CHECK(x.total_bytes == y.total_bytes);
    CHECK(x.total_lines == y.total_lines);
    CHECK(x.omitted_offset == y.omitted_offset);
    CHECK(x.omitted_limit == y.omitted_limit);
    REQUIRE(x.artifact.has_value() == y.artifact.has_value());
    if (x.artifact) {
      CHECK(x.artifact->saved == y.artifact->saved);
      CHECK(x.artifact->path == y.artifact->path);
      CHECK(x.artifact->sha256 == y.artifact->sha256);
      CHECK(x.artifact->reason == y.artifact->reason);
    }
  }
  CHECK(a.text == b.text);
  CHECK(a.deferred == b.deferred);
  CHECK(a.budget.mode == b.budget.mode);
  CHECK(a.budget.basis == b.budget.basis);
  CHECK(a.budget.batch_cap_bytes == b.budget.batch_cap_bytes);
  CHECK(a.budget.static_batch_bytes == b.budget.static_batch_bytes);
  CHECK(a.budget.per_result_bytes == b.budget.per_result_bytes);
  CHECK(a.budget.floor_bytes == b.budget.floor_bytes);
  CHECK(a.budget.max_lines == b.budget.max_lines);
  CHECK(a.budget.headroom_bytes == b.budget.headroom_bytes);
  REQUIRE(a.budget.usage.has_value() == b.budget.usage.has_value());
  if (a.budget.usage) check_same(*a.budget.usage, *b.budget.usage);
}

}  // namespace

// ---- decoding params: good input ---------------------------------------------------------

TEST_CASE("messages: each params decoder reads a good message") {
  auto init = rpc::decode_params<rpc::initialize_params>(
      {{"protocolVersion", "1"}, {"clientName", "pi"}, {"parentId", "p1"}}, lim);
  CHECK(init.protocol_version == "1");
  CHECK(init.client_name == "pi");
  CHECK(init.parent_id == "p1");

  auto started = rpc::decode_params<rpc::started_params>({{"parentId", "p1"}, {"childId", "c1"}, {"title", "T"}}, lim);
  CHECK(started.parent_id == "p1");
  CHECK(started.child_id == "c1");
  CHECK(started.title == "T");

  auto progress =
      rpc::decode_params<rpc::progress_params>({{"parentId", "p1"}, {"childId", "c1"}, {"text", "reading"}}, lim);
  CHECK(progress.text == "reading");

  auto done = rpc::decode_params<rpc::completed_params>(good_completed(), lim);
  CHECK(done.parent_id == "p1");
  CHECK(done.child_id == "c1");
  CHECK(done.title == "Review");
  CHECK(done.status == "error");
  CHECK(done.error == "exit 1");
  CHECK(done.final_text == "line 1\nline 2");

  auto check = rpc::decode_params<rpc::check_params>({{"parentId", "p1"}, {"childId", "c1"}}, lim);
  CHECK(check.child_id == "c1");

  auto wait = rpc::decode_params<rpc::wait_params>(
      {{"parentId", "p1"}, {"childIds", {"a", "b"}}, {"timeoutMs", 5000}, {"usage", good_usage()}},
      lim);
  CHECK(wait.child_ids == std::vector<std::string>{"a", "b"});
  CHECK(wait.timeout_ms == 5000);
  REQUIRE(wait.usage);
  check_same(*wait.usage, rpc::usage_dto{1200, 200000, 0.6});

  auto cancel = rpc::decode_params<rpc::cancel_params>({{"parentId", "p1"}, {"childIds", {"a"}}}, lim);
  CHECK(cancel.child_ids == std::vector<std::string>{"a"});

  auto state = rpc::decode_params<rpc::parent_state_params>({{"parentId", "p1"}, {"state", "idle"}}, lim);
  CHECK(state.state == "idle");

  auto read = rpc::decode_params<rpc::artifact_read_params>({{"sha256", sha_a}, {"offset", 120}, {"limit", 250}}, lim);
  CHECK(read.sha256 == sha_a);
  CHECK(read.offset == 120);
  CHECK(read.limit == 250);
}

TEST_CASE("messages: optional fields take their defaults when absent or null") {
  auto init = rpc::decode_params<rpc::initialize_params>(nullptr, lim);  // initialize may come without params
  CHECK(init.protocol_version == rpc::protocol_version);
  CHECK(init.client_name.empty());
  CHECK_FALSE(init.parent_id);
  CHECK_FALSE(rpc::decode_params<rpc::initialize_params>({{"parentId", nullptr}}, lim).parent_id);

  CHECK(rpc::decode_params<rpc::started_params>({{"parentId", "p"}, {"childId", "c"}}, lim).title.empty());
  auto done = rpc::decode_params<rpc::completed_params>({{"parentId", "p"},
                                     {"childId", "c"},
                                     {"status", "done"},
                                     {"finalText", ""},
                                     {"error", nullptr}},
                                    lim);
  CHECK(done.title.empty());
  CHECK(done.error.empty());
  CHECK(done.final_text.empty());

  auto wait = rpc::decode_params<rpc::wait_params>(
      {{"parentId", "p"}, {"childIds", {"c"}}, {"timeoutMs", nullptr}, {"usage", nullptr}}, lim);
  CHECK_FALSE(wait.timeout_ms);
  CHECK_FALSE(wait.usage);

  auto read = rpc::decode_params<rpc::artifact_read_params>({{"sha256", sha_a}}, lim);
  CHECK(read.offset == 1);
  CHECK_FALSE(read.limit);
}

TEST_CASE("messages: unknown members are ignored") {
  json p = good_completed();
  p["futureField"] = {{"x", 1}};
  p["_meta"] = "anything";
  CHECK(rpc::decode_params<rpc::completed_params>(p, lim).child_id == "c1");
  json u = good_usage();
  u["cost"] = 3.5;
  CHECK(rpc::decode_usage(u).context_window == 200000);
}

// ---- decoding params: each field named ---------------------------------------------------

TEST_CASE("messages: a missing required field is named") {
  const std::vector<std::pair<std::string, json>> required = {{"parentId", good_completed()},
                                                              {"childId", good_completed()},
                                                              {"status", good_completed()},
                                                              {"finalText", good_completed()}};
  for (const auto& [field, base] : required) {
    json p = base;
    p.erase(field);
    CHECK(problem_of(decode_kept<rpc::completed_params>, p) == field + ": required");
    p[field] = nullptr;  // null is absent
    CHECK(problem_of(decode_kept<rpc::completed_params>, p) == field + ": required");
  }
  CHECK(problem_of(decode_kept<rpc::started_params>, {{"childId", "c"}}) == "parentId: required");
  CHECK(problem_of(decode_kept<rpc::started_params>, {{"parentId", "p"}}) == "childId: required");
  CHECK(problem_of(decode_kept<rpc::progress_params>, {{"parentId", "p"}, {"childId", "c"}}) ==
        "text: required");
  CHECK(problem_of(decode_kept<rpc::check_params>, {{"parentId", "p"}}) == "childId: required");
  CHECK(problem_of(decode_kept<rpc::wait_params>, {{"parentId", "p"}}) == "childIds: required");
  CHECK(problem_of(decode_kept<rpc::cancel_params>, {{"childIds", {"c"}}}) == "parentId: required");
  CHECK(problem_of(decode_kept<rpc::parent_state_params>, {{"parentId", "p"}}) == "state: required");
  CHECK(problem_of(decode_kept<rpc::artifact_read_params>, {{"offset", 1}}) == "sha256: required");
}

TEST_CASE("messages: completed params decode alike from a moved json (the daemon's way) and a kept one, finalText moved out") {
  const std::string long_text(100'000, 'x');
  json p = good_completed();
  p["finalText"] = long_text;
  const auto copied = rpc::decode_params<rpc::completed_params>(p, lim);
  const auto taken = rpc::decode_params<rpc::completed_params>(std::move(p), lim);
  CHECK(rpc::encode(taken) == rpc::encode(copied));
  CHECK(taken.final_text == long_text);

  // Every complaint the same, in the same order (finalText last).
  std::vector<json> bad;
  for (const char* field : {"parentId", "childId", "status", "finalText"}) {
    json missing = good_completed();
    missing.erase(field);
    bad.push_back(missing);
  }
  for (const char* field : {"parentId", "title", "status", "error", "finalText"}) {
    json mistyped = good_completed();
    mistyped[field] = 42;
    bad.push_back(mistyped);
  }
  json both_wrong = good_completed();
  both_wrong["finalText"] = 1;
  both_wrong["childId"] = "";
  bad.push_back(both_wrong);
  bad.push_back(json::array());
  for (const json& b : bad) {
    INFO("params: ", b.dump());
    CHECK(problem_of(decode_moved<rpc::completed_params>, b) == problem_of(decode_kept<rpc::completed_params>, b));
  }
  rpc::wire_limits small = lim;
  small.max_final_text_bytes = 4;
  CHECK(problem([&] { rpc::decode_params<rpc::completed_params>(good_completed(), small); }) == "finalText: longer than 4 bytes");
}

TEST_CASE("messages: params that are not an object are refused") {
  CHECK(problem_of(decode_kept<rpc::started_params>, nullptr) == "params: expected an object");
  CHECK(problem_of(decode_kept<rpc::wait_params>, json::array({"p", {"c"}})) == "params: expected an object");
  CHECK(problem_of(decode_kept<rpc::initialize_params>, json::array()) == "params: expected an object");
  CHECK(problem_of(decode_kept<rpc::check_params>, "p") == "params: expected an object");
}

TEST_CASE("messages: a mistyped field is named with the type expected") {
  auto with = [](std::string field, json value) {
    json p = good_completed();
    p[field] = std::move(value);
    return problem_of(decode_kept<rpc::completed_params>, p);
  };
  CHECK(with("parentId", 42) == "parentId: expected a string");
  CHECK(with("childId", json::array({"c"})) == "childId: expected a string");
  CHECK(with("title", false) == "title: expected a string");
  CHECK(with("error", json::object()) == "error: expected a string");
  CHECK(with("finalText", 1.5) == "finalText: expected a string");
  CHECK(with("status", 1) == "status: expected a string");

  const json wait_base = {{"parentId", "p"}, {"childIds", {"a", "b"}}};
  auto wait_with = [&](std::string field, json value) {
    json p = wait_base;
    p[field] = std::move(value);
    return problem_of(decode_kept<rpc::wait_params>, p);
  };
  CHECK(wait_with("childIds", "a") == "childIds: expected an array");
  CHECK(wait_with("childIds", {"a", "b", 3}) == "childIds[2]: expected a string");
  CHECK(wait_with("timeoutMs", "100") == "timeoutMs: expected an integer");
  CHECK(wait_with("timeoutMs", 1.5) == "timeoutMs: expected an integer");
  CHECK(wait_with("usage", "full") == "usage: expected an object");
  CHECK(wait_with("usage", {{"contextWindow", "big"}}) == "usage.contextWindow: expected a number");
  CHECK(wait_with("usage", {{"tokens", "many"}, {"contextWindow", 1}}) ==
        "usage.tokens: expected a number");
  CHECK(wait_with("usage", {{"tokens", 1}, {"contextWindow", 1}, {"percent", "5%"}}) ==
        "usage.percent: expected a number");

  CHECK(problem_of(decode_kept<rpc::artifact_read_params>, {{"sha256", sha_a}, {"offset", "1"}}) ==
        "offset: expected an integer");
  CHECK(problem_of(decode_kept<rpc::artifact_read_params>, {{"sha256", 7}}) == "sha256: expected a string");
  CHECK(problem_of(decode_kept<rpc::initialize_params>, {{"protocolVersion", 1}}) ==
        "protocolVersion: expected a string");
}

TEST_CASE("messages: ids are 1..max bytes without control characters") {
  auto started_with = [](std::string id) {
    return problem_of(decode_kept<rpc::started_params>, {{"parentId", "p"}, {"childId", id}});
  };
  CHECK(started_with("") == "childId: must not be empty");
  CHECK(started_with(std::string(257, 'x')) == "childId: longer than 256 bytes");
  for (const char* bad : {"a\nb", "tab\there", "nul\x01", "del\x7f", "c1\xc2\x85", "\x1b[31m"}) {
    CAPTURE(bad);
    CHECK(started_with(bad) == "childId: contains a control character");
  }
  const std::string longest(256, 'x');
  CHECK(rpc::decode_params<rpc::started_params>({{"parentId", longest}, {"childId", "\xe5\xad\x90 \xc2\xa9 ok"}}, lim)
            .parent_id == longest);
  CHECK(problem_of(decode_kept<rpc::initialize_params>, {{"parentId", ""}}) == "parentId: must not be empty");
}

TEST_CASE("messages: text fields are held to their caps") {
  rpc::wire_limits small;
  small.max_title_bytes = 4;
  small.max_error_bytes = 5;
  small.max_progress_bytes = 6;
  small.max_final_text_bytes = 7;
  auto completed = [&](std::string field, std::string value) {
    json p = good_completed();
    p["title"] = "T";
    p["error"] = "E";
    p["finalText"] = "F";
    p[field] = value;
    return problem([&] { rpc::decode_params<rpc::completed_params>(p, small); });
  };
  CHECK(completed("title", "12345") == "title: longer than 4 bytes");
  CHECK(completed("error", "123456") == "error: longer than 5 bytes");
  CHECK(completed("finalText", "12345678") == "finalText: longer than 7 bytes");
  json at_caps = good_completed();
  at_caps["title"] = "1234";
  at_caps["error"] = "12345";
  at_caps["finalText"] = "1234567";
  CHECK_NOTHROW(rpc::decode_params<rpc::completed_params>(at_caps, small));
  // Bytes, not characters: "你好" is 6 bytes.
  CHECK(completed("title", "\xe4\xbd\xa0\xe5\xa5\xbd") == "title: longer than 4 bytes");

  const json progress = {{"parentId", "p"}, {"childId", "c"}, {"text", "1234567"}};
  CHECK(problem([&] { rpc::decode_params<rpc::progress_params>(progress, small); }) == "text: longer than 6 bytes");
  CHECK(problem([&] {
          rpc::decode_params<rpc::started_params>({{"parentId", "p"}, {"childId", "c"}, {"title", "12345"}}, small);
        }) == "title: longer than 4 bytes");
}

TEST_CASE("messages: closed sets of values are enforced") {
  json p = good_completed();
  for (const char* s : {"done", "error", "cancelled"}) {
    p["status"] = s;
    CHECK(rpc::decode_params<rpc::completed_params>(p, lim).status == s);
  }
  p["status"] = "finished";
  CHECK(problem_of(decode_kept<rpc::completed_params>, p) ==
        R"(status: expected one of "done", "error", "cancelled")");
  p["status"] = "DONE";
  CHECK(problem_of(decode_kept<rpc::completed_params>, p) ==
        R"(status: expected one of "done", "error", "cancelled")");
  CHECK(rpc::decode_params<rpc::parent_state_params>({{"parentId", "p"}, {"state", "busy"}}, lim).state == "busy");
  CHECK(problem_of(decode_kept<rpc::parent_state_params>, {{"parentId", "p"}, {"state", "asleep"}}) ==
        R"(state: expected one of "busy", "idle")");
}

TEST_CASE("messages: childIds holds 1..64 unique ids") {
  auto wait_ids = [](json ids) {
    return problem_of(decode_kept<rpc::wait_params>, {{"parentId", "p"}, {"childIds", ids}});
  };
  CHECK(wait_ids(json::array()) == "childIds: expected at least one id");
  json many = json::array();
  for (int i = 0; i < 64; ++i) many.push_back("c" + std::to_string(i));
  CHECK(rpc::decode_params<rpc::wait_params>({{"parentId", "p"}, {"childIds", many}}, lim).child_ids.size() == 64);
  CHECK(rpc::decode_params<rpc::cancel_params>({{"parentId", "p"}, {"childIds", many}}, lim).child_ids.size() == 64);
  many.push_back("c64");
  CHECK(wait_ids(many) == "childIds: more than 64 ids");
  CHECK(problem_of(decode_kept<rpc::cancel_params>, {{"parentId", "p"}, {"childIds", many}}) ==
        "childIds: more than 64 ids");
  CHECK(wait_ids({"a", "b", "a"}) == "childIds[2]: duplicate of childIds[0]");
  CHECK(wait_ids({"a", ""}) == "childIds[1]: must not be empty");
  CHECK(wait_ids({"a", "b\n"}) == "childIds[1]: contains a control character");
  CHECK(wait_ids({"a", nullptr}) == "childIds[1]: expected a string");
}

TEST_CASE("messages: timeoutMs, offset and limit are integers in range") {
  auto timeout = [](json t) {
    return rpc::decode_params<rpc::wait_params>({{"parentId", "p"}, {"childIds", {"c"}}, {"timeoutMs", t}}, lim)
        .timeout_ms;
  };
  CHECK(timeout(0) == 0);
  CHECK(timeout(lim.max_timeout_ms) == lim.max_timeout_ms);
  auto timeout_problem = [](json t) {
    return problem_of(decode_kept<rpc::wait_params>, {{"parentId", "p"}, {"childIds", {"c"}}, {"timeoutMs", t}});
  };
  CHECK(timeout_problem(-1) == "timeoutMs: must be between 0 and 86400000");
  CHECK(timeout_problem(lim.max_timeout_ms + 1) == "timeoutMs: must be between 0 and 86400000");
  CHECK(timeout_problem(json(18446744073709551615ULL)) ==
        "timeoutMs: must be between 0 and 86400000");

  auto read = [](json extra) {
    json p = {{"sha256", sha_a}};
    p.update(extra);
    return problem_of(decode_kept<rpc::artifact_read_params>, p);
  };
  CHECK(read({{"offset", 0}}) == "offset: must be >= 1");
  CHECK(read({{"offset", -3}}) == "offset: must be >= 1");
  CHECK(read({{"limit", 0}}) == "limit: must be >= 1");
  CHECK(read({{"limit", 2.5}}) == "limit: expected an integer");
  CHECK(read({{"offset", json(18446744073709551615ULL)}}) == "offset: too large");
}

TEST_CASE("messages: sha256 is exactly 64 lowercase hex digits") {
  auto bad = [](std::string sha) {
    return problem_of(decode_kept<rpc::artifact_read_params>, {{"sha256", sha}});
  };
  const std::string expected = "sha256: expected 64 lowercase hex digits";
  CHECK(bad(std::string(64, 'A')) == expected);
  CHECK(bad(std::string(63, 'a')) == expected);
  CHECK(bad(std::string(65, 'a')) == expected);
  CHECK(bad(std::string(63, 'a') + "g") == expected);
  CHECK(bad("../../etc/passwd") == expected);
  CHECK(bad(std::string(60, 'a') + ".txt") == expected);
  CHECK(bad("") == expected);
  const std::string mixed = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  CHECK(rpc::decode_params<rpc::artifact_read_params>({{"sha256", mixed}}, lim).sha256 == mixed);
}

TEST_CASE("messages: usage accepts what Pi sends") {
  check_same(rpc::decode_usage(good_usage()), rpc::usage_dto{1200, 200000, 0.6});
  // After compaction Pi reports tokens and percent as null.
  auto compacted =
      rpc::decode_usage({{"tokens", nullptr}, {"contextWindow", 200000}, {"percent", nullptr}});
  CHECK_FALSE(compacted.tokens);
  CHECK_FALSE(compacted.percent);
  CHECK(compacted.context_window == 200000);
  CHECK_FALSE(rpc::decode_usage({{"contextWindow", 1000}}).tokens);  // absent is null
  // Token counts are JavaScript numbers: a fraction is rounded down.
  CHECK(rpc::decode_usage({{"tokens", 1234.9}, {"contextWindow", 128000.0}}).tokens == 1234);
  CHECK(rpc::decode_usage({{"tokens", 1234.9}, {"contextWindow", 128000.0}}).context_window ==
        128000);
  // A window of 0 or less is legal on the wire; the budget treats it as unknown.
  CHECK(rpc::decode_usage({{"tokens", 5}, {"contextWindow", 0}}).context_window == 0);
  CHECK(rpc::decode_usage({{"tokens", 5}, {"contextWindow", -1}}).context_window == -1);

  auto usage_problem = [](json u) { return problem([&] { rpc::decode_usage(u); }); };
  CHECK(usage_problem({{"tokens", -1}, {"contextWindow", 1}}) == "usage.tokens: must be >= 0");
  CHECK(usage_problem({{"tokens", -0.5}, {"contextWindow", 1}}) == "usage.tokens: must be >= 0");
  CHECK(usage_problem({{"tokens", 1e300}, {"contextWindow", 1}}) == "usage.tokens: must be >= 0");
  CHECK(usage_problem({{"tokens", 1}}) == "usage.contextWindow: required");
  CHECK(usage_problem(nullptr) == "usage: expected an object");
  CHECK(problem([] { rpc::decode_usage(json::array(), "result"); }) ==
        "result: expected an object");
  CHECK(problem([] {
          rpc::decode_usage({{"tokens", "x"}, {"contextWindow", 1}}, "result");
        }) == "result.tokens: expected a number");
}

// ---- encoding: the exact wire form -------------------------------------------------------

TEST_CASE("messages: a batch is written with the documented camelCase names") {
  const json j = rpc::encode(sample_batch());
  CHECK(j.size() == 4);
  const json& cut = j["sections"][0];
  CHECK(cut == json::parse(R"({
    "childId": "c1", "title": "Audit", "status": "done",
    "text": "head\n[... middle omitted ...]\ntail", "truncated": true,
    "totalBytes": 36997, "totalLines": 422,
    "omitted": {"offset": 120, "limit": 250},
    "artifact": {"saved": true, "path": "/tmp/store/)" +
                           sha_a + R"(.txt", "sha256": ")" + sha_a + R"("}
  })"));
  const json& unsaved = j["sections"][1];
  CHECK(unsaved["error"] == "exit 2");
  CHECK(unsaved["artifact"] == json{{"saved", false},
                                    {"sha256", std::string(64, 'b')},
                                    {"reason", "ENOSPC: no space left on device"}});
  const json& whole = j["sections"][2];
  CHECK_FALSE(whole.contains("error"));  // no error: left out
  CHECK(whole["omitted"].is_null());
  CHECK(whole["artifact"].is_null());
  CHECK(j["deferred"] == 2);
  CHECK(j["text"] == "Subagent c1 \"Audit\" finished.\n\n...");
  CHECK(j["budget"] == json::parse(R"({
    "mode": "dynamic", "basis": "dynamic: 50% of 180000 free tokens",
    "batchCapBytes": 40000, "staticBatchBytes": 49152, "perResultBytes": 16384,
    "floorBytes": 512, "maxLines": 600,
    "usage": {"tokens": 20000, "contextWindow": 200000, "percent": 10.0},
    "headroomBytes": 360000
  })"));
  rpc::budget_dto fallback;
  fallback.mode = "static";
  const json s = rpc::encode(fallback);
  CHECK(s["usage"].is_null());
  CHECK(s["headroomBytes"].is_null());
}

TEST_CASE("messages: results are written with the documented names") {
  rpc::wait_result w{sample_batch(), true, {"c4", "c5"}, {"c1"}, {"c2"}};
  const json wj = rpc::encode(w);
  CHECK(wj["timedOut"] == true);
  CHECK(wj["pending"] == json{"c4", "c5"});
  CHECK(wj["alreadyDelivered"] == json{"c1"});
  CHECK(wj["cancelled"] == json{"c2"});
  CHECK(wj["sections"].size() == 3);  // the batch is flattened into the result
  CHECK(wj.contains("budget"));

  rpc::deliver_params d{"p1", "d-42", sample_batch()};
  const json dj = rpc::encode(d);
  CHECK(dj["parentId"] == "p1");
  CHECK(dj["deliveryId"] == "d-42");
  CHECK(dj["deferred"] == 2);

  CHECK(rpc::encode(rpc::completed_result{true, sha_a, 10, 2}) ==
        json{{"duplicate", true}, {"sha256", sha_a}, {"bytes", 10}, {"lines", 2}});
  CHECK(rpc::encode(rpc::cancel_result{{"a"}, 1}) == json{{"cancelled", {"a"}}, {"consumed", 1}});
  CHECK(rpc::encode(rpc::started_result{"running"}) == json{{"state", "running"}});

  rpc::check_result running;
  running.child_id = "c1";
  running.title = "T";
  running.state = "running";
  running.preview = "...last lines";
  running.preview_truncated = true;
  CHECK(rpc::encode(running) ==
        json::parse(R"({"childId":"c1","title":"T","state":"running","status":null,
      "preview":"...last lines","previewTruncated":true,"bytes":null,"lines":null})"));

  rpc::artifact_read_result page{"/s/x.txt", "a\nb", 3, 4, 10, false, 5};
  CHECK(rpc::encode(page) ==
        json::parse(R"({"path":"/s/x.txt","text":"a\nb","firstLine":3,"lastLine":4,
      "totalLines":10,"cut":false,"nextOffset":5})"));

  rpc::initialize_result init{"1", "0.1.0", std::nullopt, "/a", json{{"maxFrameBytes", 1}}};
  CHECK(rpc::encode(init) ==
        json::parse(R"({"protocolVersion":"1","serverVersion":"0.1.0","parentId":null,
      "artifactDir":"/a","limits":{"maxFrameBytes":1}})"));
}

TEST_CASE("messages: params are written with the documented names, optional ones left out") {
  CHECK(rpc::encode(rpc::wait_params{
            "p", {"a", "b"}, 100, rpc::usage_dto{std::nullopt, 1000, std::nullopt}}) ==
        json::parse(R"({"parentId":"p","childIds":["a","b"],"timeoutMs":100,
            "usage":{"tokens":null,"contextWindow":1000,"percent":null}})"));
  CHECK(rpc::encode(rpc::wait_params{"p", {"a"}, std::nullopt, std::nullopt}) ==
        json::parse(R"({"parentId":"p","childIds":["a"]})"));
  CHECK(rpc::encode(rpc::completed_params{"p", "c", "", "done", "", "x"}) ==
        json::parse(R"({"parentId":"p","childId":"c","status":"done","finalText":"x"})"));
  CHECK(rpc::encode(rpc::initialize_params{"", "", std::nullopt}) ==
        json{{"protocolVersion", "1"}});
  CHECK(rpc::encode(rpc::artifact_read_params{sha_a, 1, std::nullopt}) ==
        json{{"sha256", sha_a}, {"offset", 1}});
  CHECK(rpc::encode(rpc::usage_request_params{"p"}) == json{{"parentId", "p"}});
}

// ---- round trips ---------------------------------------------------------------------------

TEST_CASE("messages: params round-trip from client encoders to daemon decoders") {
  auto init = rpc::decode_params<rpc::initialize_params>(rpc::encode(rpc::initialize_params{"1", "cli", "p9"}), lim);
  CHECK(init.client_name == "cli");
  CHECK(init.parent_id == "p9");

  auto started = rpc::decode_params<rpc::started_params>(rpc::encode(rpc::started_params{"p", "c", "Title"}), lim);
  CHECK(started.title == "Title");

  auto progress = rpc::decode_params<rpc::progress_params>(rpc::encode(rpc::progress_params{"p", "c", "step 3"}), lim);
  CHECK(progress.text == "step 3");

  const rpc::completed_params done{"p",         "c",      "T",
                                   "cancelled", "killed", "\xe4\xbd\xa0\n\xf0\x9f\x98\x80"};
  auto done_back = rpc::decode_params<rpc::completed_params>(rpc::encode(done), lim);
  CHECK(done_back.title == done.title);
  CHECK(done_back.status == done.status);
  CHECK(done_back.error == done.error);
  CHECK(done_back.final_text == done.final_text);

  CHECK(rpc::decode_params<rpc::check_params>(rpc::encode(rpc::check_params{"p", "c"}), lim).child_id == "c");

  const rpc::wait_params wait{"p", {"a", "b", "c"}, 0, rpc::usage_dto{190000, 200000, 95.0}};
  auto wait_back = rpc::decode_params<rpc::wait_params>(rpc::encode(wait), lim);
  CHECK(wait_back.child_ids == wait.child_ids);
  CHECK(wait_back.timeout_ms == 0);
  REQUIRE(wait_back.usage);
  check_same(*wait_back.usage, *wait.usage);

  CHECK(rpc::decode_params<rpc::cancel_params>(rpc::encode(rpc::cancel_params{"p", {"x", "y"}}), lim).child_ids ==
        std::vector<std::string>{"x", "y"});
  CHECK(rpc::decode_params<rpc::parent_state_params>(rpc::encode(rpc::parent_state_params{"p", "busy"}), lim).state ==
        "busy");
  auto read = rpc::decode_params<rpc::artifact_read_params>(rpc::encode(rpc::artifact_read_params{sha_a, 7, 3}), lim);
  CHECK(read.offset == 7);
  CHECK(read.limit == 3);
  CHECK(rpc::decode_usage_request(rpc::encode(rpc::usage_request_params{"p"})).parent_id == "p");
}

TEST_CASE("messages: results round-trip from daemon encoders to client decoders") {
  const rpc::initialize_result init{"1", "0.1.0", "p1", "/home/u/.pi/agent/cache",
                                    json{{"maxDepth", 64}}};
  auto init_back = rpc::decode_result<rpc::initialize_result>(rpc::encode(init));
  CHECK(init_back.protocol_version == "1");
  CHECK(init_back.server_version == "0.1.0");
  CHECK(init_back.parent_id == "p1");
  CHECK(init_back.artifact_dir == init.artifact_dir);
  CHECK(init_back.limits == init.limits);
  CHECK_FALSE(rpc::decode_result<rpc::initialize_result>(
                  rpc::encode(rpc::initialize_result{"1", "v", std::nullopt, "/a", {}}))
                  .parent_id);

  CHECK(rpc::decode_result<rpc::started_result>(rpc::encode(rpc::started_result{"completed"})).state ==
        "completed");

  auto done =
      rpc::decode_result<rpc::completed_result>(rpc::encode(rpc::completed_result{true, sha_a, 36997, 422}));
  CHECK(done.duplicate);
  CHECK(done.sha256 == sha_a);
  CHECK(done.bytes == 36997);
  CHECK(done.lines == 422);

  rpc::check_result check{"c", "T", "completed", "error", "boom", "tail", true, 100, 5};
  auto check_back = rpc::decode_result<rpc::check_result>(rpc::encode(check));
  CHECK(check_back.state == "completed");
  CHECK(check_back.status == "error");
  CHECK(check_back.error == "boom");
  CHECK(check_back.preview == "tail");
  CHECK(check_back.preview_truncated);
  CHECK(check_back.bytes == 100);
  CHECK(check_back.lines == 5);
  auto running_back = rpc::decode_result<rpc::check_result>(
      rpc::encode(rpc::check_result{"c", "", "running", "", "", "", false, {}, {}}));
  CHECK(running_back.status.empty());
  CHECK_FALSE(running_back.bytes);

  const rpc::wait_result wait{sample_batch(), true, {"late"}, {"earlier"}, {"dropped"}};
  auto wait_back = rpc::decode_result<rpc::wait_result>(rpc::encode(wait));
  check_same(wait_back.batch, wait.batch);
  CHECK(wait_back.timed_out);
  CHECK(wait_back.pending == std::vector<std::string>{"late"});
  CHECK(wait_back.already_delivered == std::vector<std::string>{"earlier"});
  CHECK(wait_back.cancelled == std::vector<std::string>{"dropped"});
  // A daemon from before these fields leaves them out; that reads as none.
  json old_wait = rpc::encode(wait);
  old_wait.erase("alreadyDelivered");
  old_wait.erase("cancelled");
  CHECK(rpc::decode_result<rpc::wait_result>(old_wait).already_delivered.empty());
  // forgotten: children delivered and then forgotten by the daemon.
  rpc::wait_result with_forgotten = wait;
  with_forgotten.forgotten = {"long-ago"};
  CHECK(rpc::encode(with_forgotten)["forgotten"] == json{"long-ago"});
  CHECK(rpc::decode_result<rpc::wait_result>(rpc::encode(with_forgotten)).forgotten == std::vector<std::string>{"long-ago"});
  json older = rpc::encode(with_forgotten);
  older.erase("forgotten");
  CHECK(rpc::decode_result<rpc::wait_result>(older).forgotten.empty());

  auto cancel_back = rpc::decode_result<rpc::cancel_result>(rpc::encode(rpc::cancel_result{{"a", "b"}, 1}));
  CHECK(cancel_back.cancelled == std::vector<std::string>{"a", "b"});
  CHECK(cancel_back.consumed == 1);

  const rpc::artifact_read_result page{"/s/" + sha_a + ".txt", "x\ny", 120, 121, 422, true, 122};
  auto page_back = rpc::decode_result<rpc::artifact_read_result>(rpc::encode(page));
  CHECK(page_back.path == page.path);
  CHECK(page_back.text == page.text);
  CHECK(page_back.first_line == 120);
  CHECK(page_back.last_line == 121);
  CHECK(page_back.total_lines == 422);
  CHECK(page_back.cut);
  CHECK(page_back.next_offset == 122);
  CHECK_FALSE(rpc::decode_result<rpc::artifact_read_result>(
                  rpc::encode(rpc::artifact_read_result{"/p", "", 1, 1, 1, false, {}}))
                  .next_offset);

  const rpc::deliver_params deliver{"p1", "d-7", sample_batch()};
  auto deliver_back = rpc::decode_deliver(rpc::encode(deliver));
  CHECK(deliver_back.parent_id == "p1");
  CHECK(deliver_back.delivery_id == "d-7");
  check_same(deliver_back.batch, deliver.batch);

  auto section_back = rpc::decode_section(rpc::encode(sample_batch().sections[1]));
  CHECK(section_back.error == "exit 2");
  REQUIRE(section_back.artifact);
  CHECK_FALSE(section_back.artifact->saved);
  CHECK(section_back.artifact->reason == "ENOSPC: no space left on device");

  check_same(rpc::decode_usage(rpc::encode(rpc::usage_dto{std::nullopt, 0, std::nullopt})),
             rpc::usage_dto{std::nullopt, 0, std::nullopt});
}

TEST_CASE("messages: client-side decoders name the field too") {
  json wait = rpc::encode(rpc::wait_result{sample_batch(), false, {}, {}, {}});
  wait["sections"][1]["artifact"].erase("sha256");
  CHECK(problem([&] { rpc::decode_result<rpc::wait_result>(wait); }) == "sections[1].artifact.sha256: required");

  json batch = rpc::encode(sample_batch());
  batch["budget"]["usage"]["contextWindow"] = "wide";
  CHECK(problem([&] { rpc::decode_result<rpc::batch_dto>(batch); }) ==
        "budget.usage.contextWindow: expected a number");
  batch = rpc::encode(sample_batch());
  batch["sections"][0]["omitted"]["offset"] = -1;
  CHECK(problem([&] { rpc::decode_result<rpc::batch_dto>(batch); }) == "sections[0].omitted.offset: must be >= 0");
  batch = rpc::encode(sample_batch());
  batch["sections"][2]["truncated"] = "no";
  CHECK(problem([&] { rpc::decode_result<rpc::batch_dto>(batch); }) ==
        "sections[2].truncated: expected true or false");

  json deliver = rpc::encode(rpc::deliver_params{"p", "d", sample_batch()});
  deliver.erase("deliveryId");
  CHECK(problem([&] { rpc::decode_deliver(deliver); }) == "deliveryId: required");
  CHECK(problem([] { rpc::decode_deliver(json::array()); }) == "params: expected an object");
  CHECK(problem([] { rpc::decode_result<rpc::completed_result>("ok"); }) == "result: expected an object");
  CHECK(problem([] {
          rpc::decode_result<rpc::cancel_result>({{"cancelled", {"a", 1}}, {"consumed", 0}});
        }) == "cancelled[1]: expected a string");
  CHECK(problem([] {
          rpc::decode_section({{"childId", 1}});
        }) == "section.childId: expected a string");
}
