// The floor `handoff mcp` is measured against (bench/mcp_bench.cpp): a bare MCP server on stdio
// that answers initialize and answers every tools/call with its arguments' text, parsed and
// written with the same JSON library, one line each.
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    if (!request.is_object() || !request.contains("id")) continue;
    nlohmann::json result = nlohmann::json::object();
    if (request.value("method", "") == "tools/call") {
      const nlohmann::json& args = request["params"]["arguments"];
      result = {{"content", nlohmann::json::array({{{"type", "text"}, {"text", args.dump()}}})}, {"isError", false}};
    }
    const std::string reply = nlohmann::json{{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", result}}.dump() + "\n";
    std::fwrite(reply.data(), 1, reply.size(), stdout);
    std::fflush(stdout);
  }
  return 0;
}
