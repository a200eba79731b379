// Prints protocol/methods.hpp's table with the fields of every params and result type, as JSON
// (rpc::methods_description), or with --errors the JSON-RPC error codes by name
// (rpc::errc_names): what client/pi/test/wire-description.test.ts compares the TypeScript table
// and ErrorCode against. With --socket, where this environment puts handoffd's socket for a
// client and for the daemon (protocol/socket_location.hpp), computed only, nothing created:
// what client/pi/test/socket-path.test.ts compares defaultSocketPath against.
#include <iostream>
#include <string_view>

#include "protocol/jsonrpc.hpp"
#include "protocol/methods.hpp"
#include "protocol/socket_location.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--errors") {
    nlohmann::json codes = nlohmann::json::object();
    for (const auto& e : handoff::rpc::errc_names) codes[std::string(e.name)] = static_cast<int>(e.code);
    std::cout << codes.dump(2) << '\n';
    return 0;
  }
  if (argc > 1 && std::string_view(argv[1]) == "--socket") {
    using handoff::rpc::socket_source;
    const auto source = [](socket_source s) {
      return s == socket_source::handoff_socket ? "handoff_socket"
             : s == socket_source::runtime_dir  ? "runtime_dir"
                                                : "private_fallback";
    };
    const auto client = handoff::rpc::client_socket_location();
    const auto daemon = handoff::rpc::daemon_socket_location();
    const nlohmann::json where = {{"client", {{"path", client.path.string()}, {"source", source(client.source)}}},
                                  {"daemon", {{"path", daemon.path.string()}, {"source", source(daemon.source)}}}};
    std::cout << where.dump(2) << '\n';
    return 0;
  }
  std::cout << handoff::rpc::methods_description().dump(2) << '\n';
  return 0;
}
