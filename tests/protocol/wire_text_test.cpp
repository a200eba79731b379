// The typed text paths of protocol/wire.hpp: wire::append_object writes the members encode()
// holds, and rpc::read_response reads a reply straight into its Result exactly as parsing it and
// decode_result would, or declines (nullopt) and leaves the frame to them.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "protocol/json_parse.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/methods.hpp"

namespace {

namespace rpc = handoff::rpc;
using rpc::json;

template <class T>
std::string text_of(const T& v) {
  std::string out;
  rpc::wire::append_object(v, out);
  return out;
}

// append_object's text holds exactly encode()'s members, and is JSON a strict parser takes.
template <class T>
void check_written(const T& v) {
  const std::string text = text_of(v);
  CAPTURE(text);
  CHECK(rpc::parse_json(text, 64) == rpc::encode(v));
}

rpc::status_result sample_status() {
  rpc::status_result s;
  s.version = "0.1.0";
  s.uptime_ms = 1229;
  s.connections = 2;
  s.parents = 1;
  s.children = {1, 2, 3, 4};
  s.waits = 1;
  s.queue = {"/run/user/1000/handoff/queue \xc3\xa9", 5, 12345, 1, 2, 77, 91};
  s.store = {"/home/u/.pi/agent/cache", 3, std::uint64_t{1} << 40, std::nullopt};
  return s;
}

// The frame handoffd writes for `result` (service dispatch: make_encoded_response).
template <class T>
std::string reply_frame(std::int64_t id, const T& result) {
  return rpc::make_encoded_response(id, rpc::encode_result_text(result));
}

// What the slow path makes of `frame`: parse_message, then decode_result.
template <class R>
R decoded_slowly(const std::string& frame) {
  return rpc::decode_result<R>(rpc::parse_message(frame).result);
}

}  // namespace

TEST_CASE("wire text: append_object writes the members encode() holds, for every kind of field") {
  check_written(sample_status());
  rpc::status_result failed = sample_status();
  failed.store = {"/x", std::nullopt, std::nullopt, "permission denied"};  // omitted members
  check_written(failed);

  rpc::check_result check;  // optional counts written as null, an empty error omitted
  check.child_id = "c";
  check.state = "running";
  check_written(check);
  check.bytes = 10;
  check.lines = 2;
  check.error = "boom\n\"quoted\"\t\x01";
  check_written(check);

  rpc::wait_result wait;  // flattened batch, sections with their own `omitted` and artifact rules
  rpc::section_dto cut;
  cut.child_id = "c1";
  cut.status = "done";
  cut.text = "head\n...\ntail";
  cut.truncated = true;
  cut.total_bytes = 40000;
  cut.total_lines = 900;
  cut.omitted_offset = 30;
  cut.omitted_limit = 800;
  cut.artifact = rpc::artifact_dto{true, "/a/b.txt", std::string(64, 'a'), ""};
  rpc::section_dto whole;
  whole.child_id = "c2";
  whole.status = "error";
  whole.error = "failed";
  whole.text = "all of it";
  wait.batch.sections = {cut, whole};
  wait.batch.text = "rendered";
  wait.batch.budget.mode = "static";
  wait.pending = {"c3"};
  wait.forgotten = {"c4", "c5"};
  check_written(wait);

  rpc::gc_result gc;  // a list of structs and a grouped object (limits)
  gc.removed = {rpc::gc_removed{}, rpc::gc_removed{}};
  gc.max_age_s = 86400;
  gc.problems = {"one", "two"};
  check_written(gc);

  rpc::initialize_result hello;  // an object kept as it is, an optional string
  hello.protocol_version = "1";
  hello.limits = {{"maxFrameBytes", 20}, {"nested", {{"a", 1.5}}}};
  check_written(hello);
  hello.parent_id = "p";
  check_written(hello);

  check_written(rpc::cancel_request_params{json("7")});  // a shape with its own write
}

TEST_CASE("wire text: a string that is not UTF-8 is written with U+FFFD, as make_response does") {
  rpc::started_result r;
  r.state = "bad \xff byte";
  CHECK(rpc::make_encoded_response(1, rpc::encode_result_text(r)) == rpc::make_response(1, rpc::encode_result(r)));
}

TEST_CASE("wire text: read_response reads the daemon's replies as parsing and decode_result do") {
  const auto status = sample_status();
  const std::string frame = reply_frame(41, status);
  const auto fast = rpc::read_response<rpc::status_result>(frame, 41);
  REQUIRE(fast.has_value());
  CHECK(rpc::encode(*fast) == rpc::encode(decoded_slowly<rpc::status_result>(frame)));
  CHECK(rpc::encode(*fast) == rpc::encode(status));

  rpc::status_result failed = status;
  failed.store = {"/x", std::nullopt, std::nullopt, "permission denied"};
  const auto fast_failed = rpc::read_response<rpc::status_result>(reply_frame(1, failed), 1);
  REQUIRE(fast_failed.has_value());
  CHECK(rpc::encode(*fast_failed) == rpc::encode(failed));

  rpc::check_result check;
  check.child_id = "c";
  check.state = "completed";
  check.status = "done";
  check.bytes = 0;
  const auto fast_check = rpc::read_response<rpc::check_result>(reply_frame(2, check), 2);
  REQUIRE(fast_check.has_value());
  CHECK(rpc::encode(*fast_check) == rpc::encode(check));

  rpc::cancel_result cancel{{"a", "b"}, 1};
  const auto fast_cancel = rpc::read_response<rpc::cancel_result>(reply_frame(3, cancel), 3);
  REQUIRE(fast_cancel.has_value());
  CHECK(rpc::encode(*fast_cancel) == rpc::encode(cancel));

  // Members in any order, whitespace between tokens, an optional member null, a duplicate key
  // (the last one wins, as in the parser), unknown members: the same as the slow path.
  const std::string varied =
      R"({"jsonrpc":"2.0","id":5,"result":{ "store" : {"dir":"/s","files":null,"bytes":1} ,"waits":0,)"
      R"("children":{"delivered":0,"delivering":0,"completed":0,"running":9},"parents":3,"connections":1,)"
      R"("uptimeMs":0,"version":"v","queue":{"changes":0,"groups":0,"tombstones":0,"deliveries":0,)"
      R"("textBytes":0,"results":1,"results":2,"dir":"/q"}}})"
      "\n ";
  const auto fast_varied = rpc::read_response<rpc::status_result>(varied, 5);
  REQUIRE(fast_varied.has_value());
  CHECK(rpc::encode(*fast_varied) == rpc::encode(decoded_slowly<rpc::status_result>(varied)));
  CHECK(fast_varied->queue.results == 2);
  CHECK_FALSE(fast_varied->store.files.has_value());
}

TEST_CASE("wire text: read_response declines every other frame, and the slow path decides") {
  const std::string good = reply_frame(7, sample_status());
  REQUIRE(rpc::read_response<rpc::status_result>(good, 7).has_value());
  auto with = [&](std::string_view from, std::string_view to) {
    std::string f = good;
    const auto at = f.find(from);
    REQUIRE(at != std::string::npos);
    return f.replace(at, from.size(), to);
  };
  // Forms the slow path takes too, with the same result: left to it, it is not worth the code.
  const std::string valid_but_declined[] = {
      with(R"("version":"0.1.0")", R"("version":"0.1\u002e0")"),  // an escape
      with(R"("jsonrpc":"2.0","id":7)", R"("id":7,"jsonrpc":"2.0")"),  // another envelope order
      " " + good,
  };
  for (const auto& f : valid_but_declined) {
    CAPTURE(f);
    CHECK_FALSE(rpc::read_response<rpc::status_result>(f, 7).has_value());
    CHECK(rpc::encode(decoded_slowly<rpc::status_result>(f)) == rpc::encode(sample_status()));
  }
  CHECK_FALSE(rpc::read_response<rpc::status_result>(good, 8).has_value());  // another call's
  // Bad replies: declined, and the slow path says what is wrong (naming the member).
  const std::pair<std::string, std::string> bad[] = {
      {with(R"("results":5)", R"("results":-1)"), "queue.results"},
      {with(R"("results":5)", R"("results":5.0)"), "queue.results"},
      {with(R"("results":5)", R"("results":1e3)"), "queue.results"},
      {with(R"("results":5)", R"("results":9223372036854775808)"), "queue.results"},
      {with(R"("results":5)", R"("results":"5")"), "queue.results"},
      {with(R"("results":5)", R"("results":null)"), "queue.results"},
      {with(R"("results":5,)", ""), "queue.results: required"},
      {with(R"("waits":1,)", R"("waits":true,)"), "waits"},
      {with(R"("children":{"running":1,)", R"("children":[1],"x":{"running":1,)"), "children"},
  };
  for (const auto& [f, field] : bad) {
    CAPTURE(f);
    CHECK_FALSE(rpc::read_response<rpc::status_result>(f, 7).has_value());
    try {
      decoded_slowly<rpc::status_result>(f);
      FAIL("the slow path took it");
    } catch (const rpc::rpc_error& e) {
      CHECK(std::string(e.what()).find(field) != std::string::npos);
    }
  }
  // Not JSON, or not a result: declined, and the parser refuses them.
  const std::string broken[] = {
      good.substr(0, good.size() - 1),                         // cut short
      good + "x",                                              // trailing bytes
      with(R"("version":"0.1.0")", "\"version\":\"0.1.0\xff\""),  // not UTF-8
      with(R"("version":"0.1.0")", "\"version\":\"0.1\n0\""),     // a raw control byte
      with(R"("results":5)", R"("results":05)"),               // a leading zero
      R"({"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x"}})",
  };
  for (const auto& f : broken) {
    CAPTURE(f);
    CHECK_FALSE(rpc::read_response<rpc::status_result>(f, 7).has_value());
  }
}

TEST_CASE("wire text: a request as clients write it is read without a json, anything else left to parse_message") {
  const std::string started = R"({"jsonrpc":"2.0","id":12,"method":"subagent/started","params":{"parentId":"p","childId":"c"}})";
  const auto req = rpc::read_request_text(started + "\n");
  REQUIRE(req.has_value());
  CHECK(req->id == 12);
  CHECK(req->method == "subagent/started");
  rpc::started_params fast;
  REQUIRE(rpc::read_params_text(req->params, rpc::wire_limits{}, fast));
  CHECK(rpc::encode(fast) == rpc::encode(rpc::decode_params<rpc::started_params>(rpc::parse_message(started).params, rpc::wire_limits{})));

  const auto status = rpc::read_request_text(R"({"jsonrpc":"2.0","id":-3,"method":"daemon/status"})");
  REQUIRE(status.has_value());
  CHECK(status->id == -3);
  CHECK(status->params.empty());
  rpc::status_params none;
  CHECK(rpc::read_params_text(status->params, rpc::wire_limits{}, none));
  CHECK_FALSE(rpc::read_params_text(R"({"ignored":true})", rpc::wire_limits{}, none));  // checked by the parser

  // Other forms: notifications, string ids, another order, members after params, not JSON.
  for (const char* other : {R"({"jsonrpc":"2.0","method":"subagent/progress","params":{}})",
                            R"({"jsonrpc":"2.0","id":"a","method":"daemon/status"})",
                            R"({"id":1,"jsonrpc":"2.0","method":"daemon/status"})",
                            R"({"jsonrpc":"2.0","id":1,"method":"daemon\/status"})",
                            R"({"jsonrpc":"2.0","id":1,"method":"daemon/status",)",
                            R"({"jsonrpc":"2.0","id":1,"method":"daemon/status","params":})",  // fuzz_reply found it
                            R"({"jsonrpc":"2.0","id":1,"method":"initialize","params": })",
                            R"({"jsonrpc":"2.0","id":1,"method":"daemon/status"})" "x"}) {
    CAPTURE(other);
    CHECK_FALSE(rpc::read_request_text(other).has_value());
  }
  const auto extra = rpc::read_request_text(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"parentId":"p","childId":"c"},"x":1})");
  REQUIRE(extra.has_value());  // the params' text runs to the end: the typed reader declines it
  CHECK_FALSE(rpc::read_params_text(extra->params, rpc::wire_limits{}, fast));
  // Params the field_reader would refuse are declined, so that it names the member.
  for (const char* bad : {R"({"parentId":"p"})", R"({"parentId":"p","childId":""})", R"({"parentId":"p","childId":"a\u0001"})",
                          R"({"parentId":"p","childId":"c\u0001"})", R"({"parentId":"p","childId":7})", R"(null)", R"([])",
                          "{\"parentId\":\"p\",\"childId\":\"c\x01\"}"}) {
    CAPTURE(bad);
    rpc::started_params p;
    CHECK_FALSE(rpc::read_params_text(bad, rpc::wire_limits{}, p));
  }
}
