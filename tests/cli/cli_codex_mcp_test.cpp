// `handoff mcp` (client/cli/harness/codex/mcp_server.cpp) spoken to on its wire: raw lines on its
// standard input, including malformed ones, and each reply checked by its id. No handoffd and no
// codex are needed for these: every call here is answered before either would be asked. Real
// Codex driving it: tests/codex/mcp.test.mjs.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "support/temp_dir.hpp"

namespace {

using nlohmann::json;

// Runs `handoff mcp` on `lines` (then end of input) and returns its replies by the JSON of their
// id ("null" for those without one, in order, as "null#1", "null#2"...).
std::map<std::string, json> replies_to(const std::vector<std::string>& lines) {
  const handoff::test::temp_dir dir("handoff-mcp");
  std::string input;
  for (const std::string& line : lines) input += line + "\n";
  const handoff::test::cli_result r =
      handoff::test::run_cli({"mcp"}, input,
                             {"XDG_STATE_HOME=" + dir.path().string(), "HANDOFF_AUTOSTART=0",
                              "HANDOFF_SOCKET=" + (dir / "absent.sock").string(), "HANDOFF_CODEX=/bin/false"});
  CHECK(r.status == 0);
  std::map<std::string, json> out;
  int nulls = 0;
  std::size_t from = 0;
  for (std::size_t nl; (nl = r.out.find('\n', from)) != std::string::npos; from = nl + 1) {
    const json reply = json::parse(r.out.substr(from, nl - from));
    CHECK(reply.value("jsonrpc", "") == "2.0");
    std::string key = reply.at("id").dump();
    if (key == "null") key += "#" + std::to_string(++nulls);
    out[key] = reply;
  }
  CHECK(from == r.out.size());  // every reply is one whole line
  return out;
}

std::string text_of(const json& reply) { return reply.at("result").at("content").at(0).at("text"); }

std::string call(int id, const std::string& tool, const std::string& args, const std::string& meta = R"({"threadId":"t-1"})") {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" + tool +
         R"(","arguments":)" + args + R"(,"_meta":)" + meta + "}}";
}

}  // namespace

TEST_CASE("handoff mcp: initialize, tools/list from its one table, ping, and no reply to notifications or responses") {
  const auto replies = replies_to({
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}})",
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
      R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})",
      R"({"jsonrpc":"2.0","id":"p","method":"ping"})",
      R"({"jsonrpc":"2.0","id":40,"result":{}})",
  });
  REQUIRE(replies.size() == 3);
  const json& init = replies.at("1").at("result");
  CHECK(init.at("protocolVersion") == "2025-06-18");
  CHECK(init.at("serverInfo").at("name") == "handoff");
  CHECK(init.at("capabilities") == json{{"tools", {{"listChanged", false}}}});
  std::vector<std::string> names;
  for (const json& tool : replies.at("2").at("result").at("tools")) {
    names.push_back(tool.at("name"));
    CHECK(tool.at("inputSchema").at("type") == "object");
    CHECK(tool.at("inputSchema").at("additionalProperties") == false);
    CHECK(!tool.at("description").get<std::string>().empty());
  }
  CHECK(names == std::vector<std::string>{"subagent_spawn", "subagent_wait", "subagent_check", "subagent_cancel",
                                          "subagent_send", "subagent_list"});
  CHECK(replies.at("\"p\"").at("result") == json::object());
}

TEST_CASE("handoff mcp: what is not JSON-RPC, an unknown method or tool get JSON-RPC's error codes, and it goes on") {
  const auto replies = replies_to({
      "not json",
      "",
      R"({"id":7})",
      R"([1,2])",
      R"({"jsonrpc":"2.0","id":3,"method":"nope"})",
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}})",
      R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{}}})",
      R"({"jsonrpc":"2.0","id":9,"method":"ping"})",
  });
  const auto error = [&](const std::string& id) { return replies.at(id).at("error"); };
  CHECK(error("null#1") == json{{"code", -32700}, {"message", "not JSON"}});
  CHECK(error("7") == json{{"code", -32600}, {"message", "not a JSON-RPC 2.0 request"}});
  CHECK(error("null#2") == json{{"code", -32600}, {"message", "not a JSON-RPC 2.0 request"}});
  CHECK(error("3") == json{{"code", -32601}, {"message", "handoff mcp has no method nope"}});
  CHECK(error("4") == json{{"code", -32602}, {"message", "handoff mcp has no tool nope"}});
  CHECK(error("8") == json{{"code", -32602}, {"message", "tools/call needs params.name"}});
  CHECK(replies.at("9").at("result") == json::object());
  CHECK(replies.size() == 7);
}

TEST_CASE("handoff mcp: bad tool arguments are a tool result with isError, naming the tool and what to fix") {
  const auto replies = replies_to({
      call(5, "subagent_list", "{}"),
      call(6, "subagent_spawn", "{}"),
      call(10, "subagent_check", R"({"id":"cx-000000"})"),
      call(11, "subagent_wait", R"({"ids":"x"})"),
      call(12, "subagent_wait", "{}"),
      call(13, "subagent_list", "[]"),
      call(14, "subagent_list", "{}", "{}"),
  });
  REQUIRE(replies.size() == 7);
  CHECK(text_of(replies.at("5")) == "No subagents in this Codex thread.");
  CHECK(replies.at("5").at("result").at("isError") == false);
  CHECK(text_of(replies.at("6")) == "subagent_spawn: `task` is required");
  CHECK(replies.at("6").at("result").at("isError") == true);
  CHECK(text_of(replies.at("10")) ==
        "subagent_check: no subagent cx-000000 in this Codex thread (subagent_list shows them)");
  CHECK(text_of(replies.at("11")) == "subagent_wait: `ids` must be an array of strings");
  CHECK(text_of(replies.at("12")) == "No subagent of this thread has a result you have not received.");
  CHECK(text_of(replies.at("13")) == "subagent_list: arguments must be an object");
  CHECK(text_of(replies.at("14")) ==
        "subagent_list: the call carries no _meta.threadId: handoff mcp serves Codex threads");
}
