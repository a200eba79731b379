// parse_message and the message builders: JSON-RPC 2.0 as the spec words it, and hostile input.
#include "protocol/jsonrpc.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

namespace {

using handoff::rpc::errc;
using handoff::rpc::json;
using handoff::rpc::message;
using handoff::rpc::parse_limits;
using handoff::rpc::parse_message;
using handoff::rpc::rpc_error;

// The error parse_message throws for a frame (fails the test when it does not throw).
rpc_error error_of(std::string_view frame, const parse_limits& limits = {}) {
  try {
    parse_message(frame, limits);
  } catch (const rpc_error& e) {
    return e;
  }
  FAIL("no error for: " << std::string(frame.substr(0, 200)));
  return rpc_error(errc::internal_error, "unreachable");
}

double seconds_to_parse(std::string_view frame) {
  const auto start = std::chrono::steady_clock::now();
  try {
    parse_message(frame);
  } catch (const rpc_error&) {
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("jsonrpc: error codes are JSON-RPC's and handoff's documented ones") {
  CHECK(static_cast<int>(errc::parse_error) == -32700);
  CHECK(static_cast<int>(errc::invalid_request) == -32600);
  CHECK(static_cast<int>(errc::method_not_found) == -32601);
  CHECK(static_cast<int>(errc::invalid_params) == -32602);
  CHECK(static_cast<int>(errc::internal_error) == -32603);
  for (errc c : {errc::unknown_parent, errc::unknown_child, errc::frame_too_large,
                 errc::too_many_connections, errc::storage_failed, errc::conflict, errc::not_found,
                 errc::shutting_down, errc::request_timeout, errc::overloaded}) {
    CHECK(static_cast<int>(c) <= -32000);
    CHECK(static_cast<int>(c) >= -32099);
  }
  CHECK(handoff::rpc::default_message(errc::parse_error) == "Parse error");
  CHECK(handoff::rpc::default_message(errc::invalid_request) == "Invalid Request");
  CHECK(handoff::rpc::default_message(errc::method_not_found) == "Method not found");
  CHECK(handoff::rpc::default_message(errc::invalid_params) == "Invalid params");
  CHECK(handoff::rpc::default_message(errc::internal_error) == "Internal error");
  CHECK(handoff::rpc::default_message(errc::frame_too_large) == "Frame too large");
  CHECK(handoff::rpc::default_message(static_cast<errc>(-32050)) == "Server error");
}

TEST_CASE("jsonrpc: requests, notifications and responses are told apart") {
  auto req =
      parse_message(R"({"jsonrpc":"2.0","id":7,"method":"subagent/check","params":{"a":1}})");
  CHECK(req.type == message::kind::request);
  CHECK(req.id == 7);
  CHECK(req.method == "subagent/check");
  CHECK(req.params == json{{"a", 1}});

  auto str_id = parse_message(R"({"jsonrpc":"2.0","id":"abc","method":"m","params":[1,2]})");
  CHECK(str_id.type == message::kind::request);
  CHECK(str_id.id == "abc");
  CHECK(str_id.params == json::array({1, 2}));

  auto null_id = parse_message(R"({"jsonrpc":"2.0","id":null,"method":"m"})");
  CHECK(null_id.type == message::kind::request);  // JSON-RPC: an id member makes it a request
  CHECK(null_id.id.is_null());

  auto note =
      parse_message(R"({"jsonrpc":"2.0","method":"parent/state","params":{"state":"idle"}})");
  CHECK(note.type == message::kind::notification);
  CHECK(note.id.is_null());
  CHECK(note.params["state"] == "idle");

  auto no_params = parse_message(R"({"method":"daemon/status","jsonrpc":"2.0","id":1})");
  CHECK(no_params.params.is_null());
  auto null_params =
      parse_message(R"({"jsonrpc":"2.0","id":1,"method":"daemon/status","params":null})");
  CHECK(null_params.type == message::kind::request);  // taken as absent
  CHECK(null_params.params.is_null());

  auto ok = parse_message(R"({"jsonrpc":"2.0","id":3,"result":{"tokens":null}})");
  CHECK(ok.type == message::kind::response);
  CHECK(ok.id == 3);
  CHECK(ok.result == json{{"tokens", nullptr}});
  CHECK_FALSE(ok.error);

  auto null_result = parse_message(R"({"jsonrpc":"2.0","id":4,"result":null})");
  CHECK(null_result.type == message::kind::response);  // context/usage may answer null
  CHECK(null_result.result.is_null());
  CHECK_FALSE(null_result.error);

  auto failed = parse_message(
      R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
  CHECK(failed.type == message::kind::response);
  REQUIRE(failed.error);
  CHECK((*failed.error)["code"] == -32700);
}

TEST_CASE("jsonrpc: unknown members are ignored and a duplicate key keeps the last value") {
  auto m = parse_message(
      R"({"jsonrpc":"2.0","id":1,"id":2,"method":"a","method":"b","extra":{"x":[]}})");
  CHECK(m.id == 2);
  CHECK(m.method == "b");
}

TEST_CASE("jsonrpc: text that is not JSON is a parse error that names the byte, not the input") {
  for (const char* frame :
       {"", "{", "{\"jsonrpc\":\"2.0\",}", "{'a':1}", "nul", "{} x", "{\"a\":1}{\"b\":2}",
        "/* comment */ {}", "{\"a\":01}", "[1,]", "\"\\x\""}) {
    CAPTURE(frame);
    const auto e = error_of(frame);
    CHECK(e.code == errc::parse_error);
    CHECK(e.data.is_null());
    CHECK(std::string(e.what()).find("invalid JSON") == 0);
  }
  CHECK(std::string(error_of("{} x").what()) ==
        "invalid JSON at byte 4: invalid literal; expected end of input");
  // A long bad token is not echoed back.
  const std::string long_bad = "{\"a\":\"" + std::string(1'000'000, 'a') + "\xff\"}";
  const auto e = error_of(long_bad);
  CHECK(e.code == errc::parse_error);
  CHECK(std::string(e.what()).size() < 200);
  CHECK(std::string(e.what()).find("aaaa") == std::string::npos);
}

TEST_CASE("jsonrpc: invalid UTF-8 anywhere is a parse error, valid UTF-8 is kept as is") {
  const char* const bad[] = {
      "\xff",              // never valid
      "\xc0\xaf",          // overlong '/'
      "\xed\xa0\x80",      // an encoded surrogate
      "\xe4\xbd",          // truncated sequence
      "\xf4\x90\x80\x80",  // above U+10FFFF
      "\x80",              // a lone continuation byte
      "\\ud800",           // a lone surrogate escape
  };
  for (const char* inner : bad) {
    const std::string frame =
        std::string(R"({"jsonrpc":"2.0","method":"m","params":{"t":")") + inner + "\"}}";
    CAPTURE(frame);
    CHECK(error_of(frame).code == errc::parse_error);
  }
  CHECK(error_of("{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\xff").code == errc::parse_error);
  const std::string text = "\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80 \\u00e9 \\ud83d\\ude00";
  auto m = parse_message(R"({"jsonrpc":"2.0","method":"m","params":{"t":")" + text + "\"}}");
  CHECK(m.params["t"] == "\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80 \xc3\xa9 \xf0\x9f\x98\x80");
}

TEST_CASE("jsonrpc: nesting is capped while parsing, and 100k levels are refused at once") {
  const std::string deep_arrays =
      R"({"jsonrpc":"2.0","method":"m","params":)" + std::string(100'000, '[');
  auto e = error_of(deep_arrays);
  CHECK(e.code == errc::parse_error);
  CHECK(std::string(e.what()) == "invalid JSON: nested deeper than 64 levels");
  CHECK(seconds_to_parse(deep_arrays) < 0.5);

  std::string deep_objects;
  for (int i = 0; i < 100'000; ++i) deep_objects += "{\"a\":";
  CHECK(error_of(deep_objects).code == errc::parse_error);
  CHECK(seconds_to_parse(deep_objects) < 0.5);

  // The cap counts the envelope: depth 1 is the message object itself.
  const parse_limits three{3};
  CHECK_NOTHROW(parse_message(R"({"jsonrpc":"2.0","method":"m","params":{"a":[1]}})", three));
  CHECK(error_of(R"({"jsonrpc":"2.0","method":"m","params":{"a":[[1]]}})", three).code ==
        errc::parse_error);
  // Closing brackets give the depth back.
  CHECK_NOTHROW(
      parse_message(R"({"jsonrpc":"2.0","method":"m","params":[[1],[2],{"b":3},[4]]})", three));
}

TEST_CASE("jsonrpc: wide documents parse in linear time") {
  // nlohmann's parser callback rescans the parent at each '}' (quadratic: about a minute here).
  std::string wide = R"({"jsonrpc":"2.0","method":"m","params":[)";
  for (int i = 0; i < 300'000; ++i) wide += i == 0 ? "{}" : ",{}";
  wide += "]}";
  const auto start = std::chrono::steady_clock::now();
  auto m = parse_message(wide);
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(m.params.size() == 300'000);
  CHECK(seconds < 5.0);
}

TEST_CASE("jsonrpc: numbers out of range and ids that are not strings or integers") {
  CHECK(error_of(R"({"jsonrpc":"2.0","method":"m","params":[1e400]})").code == errc::parse_error);
  CHECK(std::string(error_of(R"({"jsonrpc":"2.0","method":"m","params":[-1e400]})").what())
            .find("number out of range") != std::string::npos);
  CHECK_NOTHROW(parse_message(
      R"({"jsonrpc":"2.0","method":"m","params":[1e308, 123456789012345678901234567890]})"));

  CHECK(parse_message(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"m"})").id ==
        json(18446744073709551615ULL));
  CHECK(parse_message(R"({"jsonrpc":"2.0","id":-5,"method":"m"})").id == -5);
  for (const char* id : {"1.5", "1.0", "123456789012345678901234567890", "true", "{}", "[1]"}) {
    CAPTURE(id);
    const auto e = error_of(std::string(R"({"jsonrpc":"2.0","method":"m","id":)") + id + "}");
    CHECK(e.code == errc::invalid_request);
    CHECK(std::string(e.what()) == "id: expected a string, an integer or null");
    CHECK(e.data.is_null());  // an unusable id cannot be answered to
  }
}

TEST_CASE("jsonrpc: messages that are JSON but not JSON-RPC 2.0 are invalid requests") {
  struct bad_case {
    const char* frame;
    const char* message;
  };
  const bad_case cases[] = {
      {R"({"id":1,"method":"m"})", "jsonrpc: expected \"2.0\""},
      {R"({"jsonrpc":"1.0","id":1,"method":"m"})", "jsonrpc: expected \"2.0\""},
      {R"({"jsonrpc":2.0,"id":1,"method":"m"})", "jsonrpc: expected \"2.0\""},
      {R"({"jsonrpc":"2.0","id":1,"method":5})", "method: expected a string"},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","params":"x"})",
       "params: expected an object or an array"},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","params":true})",
       "params: expected an object or an array"},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","result":1})",
       "a request carries no result or error"},
      {R"({"jsonrpc":"2.0","id":1})",
       "expected \"method\" (a request) or \"result\" or \"error\" (a response)"},
      {R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}})",
       "a response carries result or error, not both"},
      {R"({"jsonrpc":"2.0","id":1,"error":"boom"})",
       "error: expected {\"code\": integer, \"message\": string}"},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}})",
       "error: expected {\"code\": integer, \"message\": string}"},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":1}})",
       "error: expected {\"code\": integer, \"message\": string}"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.frame);
    const auto e = error_of(c.frame);
    CHECK(e.code == errc::invalid_request);
    CHECK(std::string(e.what()) == c.message);
    CHECK(e.data == json{{"id", 1}});  // the reply can carry the request's id
  }
  const auto no_id = error_of(R"({"jsonrpc":"2.0","result":1})");
  CHECK(std::string(no_id.what()) == "id: a response needs one");
  CHECK(no_id.data.is_null());
  CHECK(error_of(R"({"jsonrpc":"1.0","id":"s","method":"m"})").data == json{{"id", "s"}});
}

TEST_CASE("jsonrpc: batches and bare values are refused") {
  for (const char* frame : {"[]", R"([{"jsonrpc":"2.0","id":1,"method":"m"}])"}) {
    const auto e = error_of(frame);
    CHECK(e.code == errc::invalid_request);
    CHECK(std::string(e.what()) == "batch requests are not supported");
    CHECK(e.data.is_null());
  }
  for (const char* frame : {"42", "\"hello\"", "null", "true"}) {
    CAPTURE(frame);
    const auto e = error_of(frame);
    CHECK(e.code == errc::invalid_request);
    CHECK(std::string(e.what()) == "a message must be a JSON object");
  }
}

TEST_CASE("jsonrpc: responses and errors have exactly the JSON-RPC 2.0 shape") {
  using handoff::rpc::make_error;
  using handoff::rpc::make_response;
  CHECK(make_response(1, json{{"b", 2}, {"a", 1}}) ==
        R"({"jsonrpc":"2.0","id":1,"result":{"a":1,"b":2}})");
  CHECK(make_response("x", nullptr) == R"({"jsonrpc":"2.0","id":"x","result":null})");
  CHECK(make_error(nullptr, errc::parse_error, "Parse error") ==
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
  CHECK(
      make_error(7, errc::invalid_params, "parentId: required", json{{"field", "parentId"}}) ==
      R"({"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"parentId: required","data":{"field":"parentId"}}})");
  CHECK(make_error("q", errc::unknown_parent, "say \"hi\"\n") ==
        R"({"jsonrpc":"2.0","id":"q","error":{"code":-32001,"message":"say \"hi\"\n"}})");

  // What we write parses back as what we meant.
  auto back = parse_message(make_error(9, errc::not_found, "gone", json{{"k", 1}}));
  CHECK(back.type == message::kind::response);
  CHECK(back.id == 9);
  REQUIRE(back.error);
  CHECK(*back.error == json{{"code", -32007}, {"message", "gone"}, {"data", {{"k", 1}}}});
}

TEST_CASE("jsonrpc: requests and notifications round-trip, null params are left out") {
  using handoff::rpc::make_notification;
  using handoff::rpc::make_request;
  CHECK(make_request(1, "context/usage", json{{"parentId", "p"}}) ==
        R"({"jsonrpc":"2.0","id":1,"method":"context/usage","params":{"parentId":"p"}})");
  CHECK(make_request(2, "daemon/status", nullptr) ==
        R"({"jsonrpc":"2.0","id":2,"method":"daemon/status"})");
  CHECK(make_notification("parent/state", json{{"state", "idle"}}) ==
        R"({"jsonrpc":"2.0","method":"parent/state","params":{"state":"idle"}})");
  CHECK(make_notification("x", nullptr) == R"({"jsonrpc":"2.0","method":"x"})");

  auto r = parse_message(make_request("id-1", "subagent/wait", json{{"childIds", {"a", "b"}}}));
  CHECK(r.type == message::kind::request);
  CHECK(r.id == "id-1");
  CHECK(r.method == "subagent/wait");
  CHECK(r.params == json{{"childIds", {"a", "b"}}});
  auto n = parse_message(make_notification("subagent/progress", json{{"text", "\xe2\x9c\x93"}}));
  CHECK(n.type == message::kind::notification);
  CHECK(n.params["text"] == "\xe2\x9c\x93");
}

TEST_CASE("jsonrpc: builders never throw on invalid UTF-8, it becomes U+FFFD") {
  using handoff::rpc::make_error;
  using handoff::rpc::make_response;
  std::string out;
  CHECK_NOTHROW(out = make_error(1, errc::internal_error, "bad \xff byte"));
  auto back = parse_message(out);
  REQUIRE(back.error);
  CHECK((*back.error)["message"] == "bad \xef\xbf\xbd byte");
  CHECK_NOTHROW(out = make_response(1, json{{"text", "\xc3"}}));
  CHECK(parse_message(out).result["text"] == "\xef\xbf\xbd");
}
