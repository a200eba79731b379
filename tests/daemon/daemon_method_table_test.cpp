// protocol/methods.hpp against a real handoffd: every client -> daemon method described there is
// in the daemon's method table, and no daemon -> client one is. A method described but never
// bound fails here.
#include <doctest/doctest.h>

#include <string>
#include <tuple>

#include "protocol/jsonrpc.hpp"
#include "protocol/methods.hpp"
#include "support/daemon_process.hpp"
#include "support/raw_client.hpp"

using namespace handoff::test;
namespace rpc = handoff::rpc;

TEST_CASE("every client-to-daemon method of protocol/methods.hpp is in the daemon's table, no other") {
  daemon_process d;
  raw_client c(d.socket());
  const int not_found = static_cast<int>(rpc::errc::method_not_found);
  auto check = [&](const auto& method) {
    // Params no method takes (an array): answered at once, -32602 or a result, never -32601.
    const json reply = c.call(method.name, json::array());
    INFO(method.name, ": ", reply.dump());
    const bool unknown = reply.contains("error") && reply["error"]["code"] == not_found;
    CHECK(unknown == (method.dir == rpc::direction::to_client));
  };
  std::apply([&](const auto&... method) { (check(method), ...); }, rpc::methods::all);
}
