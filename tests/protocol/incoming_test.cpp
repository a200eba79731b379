// rpc::incoming: a request read as text is routed by its method and parsed only when a decoder
// asks, once, with the errors parse_message gives, answered to the id they name.
#include "protocol/incoming.hpp"

#include <doctest/doctest.h>

#include <string>

namespace {

using handoff::rpc::errc;
using handoff::rpc::incoming;
using handoff::rpc::json;
using handoff::rpc::rpc_error;

// A frame read_request_text takes, as the session makes it an incoming; `frame` must outlive it.
incoming read_as_text(const std::string& frame) {
  const auto text = handoff::rpc::read_request_text(frame);
  REQUIRE_MESSAGE(text.has_value(), frame);
  return incoming(frame, *text, handoff::rpc::parse_limits{});
}

// The error parsed() throws for `in` (fails the test when it does not throw).
rpc_error incoming_error_of(incoming& in) {
  try {
    in.parsed();
  } catch (const rpc_error& e) {
    return e;
  }
  FAIL("parsed() did not throw");
  return rpc_error(errc::internal_error, "unreachable");
}

}  // namespace

TEST_CASE("incoming: a request read as text gives its params' text until it is parsed, then the message") {
  const std::string frame = R"({"jsonrpc":"2.0","id":12,"method":"subagent/started","params":{"parentId":"p","childId":"c"}})";
  incoming in = read_as_text(frame);
  CHECK(in.id() == 12);
  CHECK(in.method() == "subagent/started");
  CHECK_FALSE(in.is_notification());
  REQUIRE(in.params_text().has_value());
  CHECK(*in.params_text() == R"({"parentId":"p","childId":"c"})");
  handoff::rpc::message& m = in.parsed();
  CHECK(m.params == json{{"parentId", "p"}, {"childId", "c"}});
  CHECK_FALSE(in.params_text().has_value());
  CHECK(&in.parsed() == &m);  // parsed once
  CHECK(in.method() == "subagent/started");
}

TEST_CASE("incoming: a parsed notification has no id and no params text") {
  incoming in(handoff::rpc::parse_message(R"({"jsonrpc":"2.0","method":"parent/state","params":{"parentId":"p","state":"idle"}})"));
  CHECK(in.is_notification());
  CHECK(in.id().is_null());
  CHECK(in.method() == "parent/state");
  CHECK_FALSE(in.params_text().has_value());
  CHECK(in.parsed().params["state"] == "idle");
}

TEST_CASE("incoming: a frame read as text that is not JSON is a parse error whose id is unknown") {
  const std::string in_frame = R"({"jsonrpc":"2.0","id":3,"method":"daemon/status","params":{"x":}})";
  incoming in = read_as_text(in_frame);
  const rpc_error e = incoming_error_of(in);
  CHECK(e.code == errc::parse_error);
  CHECK(e.data.is_null());
  CHECK(in.id().is_null());
}

TEST_CASE("incoming: params that are not structured are an invalid request, to the request's id") {
  const std::string in_frame = R"({"jsonrpc":"2.0","id":4,"method":"daemon/status","params":5})";
  incoming in = read_as_text(in_frame);
  const rpc_error e = incoming_error_of(in);
  CHECK(e.code == errc::invalid_request);
  CHECK(in.id() == 4);
}

TEST_CASE("incoming: an id or a method given again after the params is refused, to the last id") {
  const std::string method_twice_frame = R"({"jsonrpc":"2.0","id":5,"method":"a","params":{},"method":"b"})";
  incoming method_twice = read_as_text(method_twice_frame);
  CHECK(method_twice.method() == "a");
  CHECK(incoming_error_of(method_twice).code == errc::invalid_request);
  CHECK(method_twice.id() == 5);

  const std::string id_twice_frame = R"({"jsonrpc":"2.0","id":6,"method":"a","params":{},"id":"seven"})";
  incoming id_twice = read_as_text(id_twice_frame);
  CHECK(incoming_error_of(id_twice).code == errc::invalid_request);
  CHECK(id_twice.id() == "seven");

  // The same method and id again change nothing: the request is what the text said.
  const std::string same_frame = R"({"jsonrpc":"2.0","id":8,"method":"a","params":{"k":1},"method":"a","id":8})";
  incoming same = read_as_text(same_frame);
  CHECK(same.parsed().params == json{{"k", 1}});
  CHECK(same.id() == 8);
}
