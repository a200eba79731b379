// Prints protocol/methods.hpp's table with the fields of every params and result type, as JSON
// (rpc::methods_description), or with --errors the JSON-RPC error codes by name
// (rpc::errc_names): what client/pi/test/wire-description.test.ts compares the TypeScript table
// and ErrorCode against.
#include <iostream>
#include <string_view>

#include "protocol/jsonrpc.hpp"
#include "protocol/methods.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--errors") {
    nlohmann::json codes = nlohmann::json::object();
    for (const auto& e : handoff::rpc::errc_names) codes[std::string(e.name)] = static_cast<int>(e.code);
    std::cout << codes.dump(2) << '\n';
    return 0;
  }
  std::cout << handoff::rpc::methods_description().dump(2) << '\n';
  return 0;
}
