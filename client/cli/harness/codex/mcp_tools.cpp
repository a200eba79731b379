#include "cli/harness/codex/mcp_tools.hpp"

#include <algorithm>

#include "cli/harness/codex/tool_handlers.hpp"

namespace handoff::cli::codex {
namespace {

using nlohmann::json;

const char* const read_not_ask =
    "A long answer is cut to its first and last lines; its footer names the file with the full text and the "
    "exec_command calls that show the rest: run those instead of asking the subagent again.";

json schema(json properties, std::vector<std::string> required) {
  json out = {{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (!required.empty()) out["required"] = std::move(required);
  return out;
}

std::vector<tool> make_tools() {
  const json id = {{"type", "string"}, {"description", "The subagent id (as subagent_spawn returned it)"}};
  std::vector<tool> out;
  out.push_back(
      {"subagent_spawn",
       std::string("Start a subagent: a separate Codex (`codex exec`, this session's configuration and model) that "
                   "works on `task` on its own and returns at once with its id. Get its final answer with "
                   "subagent_wait. ") +
           read_not_ask +
           " Prefer these subagent_* tools to spawn_agent / wait_agent: their answers come bounded, with the "
           "full text kept on disk. To give the same subagent more work later, use subagent_send.",
       schema({{"task", {{"type", "string"}, {"description", "The subagent's prompt: everything it needs to know"}}},
               {"title",
                {{"type", "string"},
                 {"description", "A short title shown with its result (default: the task's first line)"}}},
               {"cwd", {{"type", "string"}, {"description", "Working directory (default: this session's)"}}},
               {"model", {{"type", "string"}, {"description", "Model (default: this session's)"}}}},
              {"task"}),
       &spawn_tool});
  out.push_back(
      {"subagent_wait",
       std::string("Wait until subagents finish and return their results (each cut to fit if long). Without `ids`, "
                   "waits for every subagent of this thread whose result you have not received yet; a subagent's "
                   "id waits for all its turns not received yet (`ID.N` for turn N only). ") +
           read_not_ask,
       schema({{"ids",
                {{"type", "array"},
                 {"items", {{"type", "string"}}},
                 {"description", "Subagent ids, or ID.N for turn N (default: all not yet received)"}}},
               {"timeoutMs",
                {{"type", "integer"},
                 {"minimum", 0},
                 {"maximum", 86'400'000},
                 {"description", "Give up after this many ms (default: no limit)"}}}},
              {}),
       &wait_tool});
  out.push_back(
      {"subagent_check",
       "A subagent's state and a preview of its latest activity (at most 2 KiB / 20 lines); for a subagent given "
       "follow-ups, its latest turn (`ID.N`: turn N). Does not consume its result.",
       schema({{"id", id}}, {"id"}), &check_tool});
  out.push_back(
      {"subagent_cancel",
       "Stop a subagent: ends its process and everything it started, drops its results not received yet, and "
       "closes its conversation (subagent_send to it is refused after).",
       schema({{"id", id}}, {"id"}), &cancel_tool});
  out.push_back(
      {"subagent_send",
       "Give a subagent more work: `message` becomes the next prompt of its own Codex conversation, which goes on "
       "with everything it read and said so far, so it need not start over. Its answer is a new result `ID.N` "
       "(turn N), returned by subagent_wait like any other. A subagent still working gets the message when its "
       "current turn ends. Only for new work: to see more of an answer that was cut, run the calls its footer "
       "names instead of asking again.",
       schema({{"id", id}, {"message", {{"type", "string"}, {"description", "The next prompt for that subagent"}}}},
              {"id", "message"}),
       &send_tool});
  out.push_back(
      {"subagent_list",
       "Every subagent of this thread, one line each: id, title, state (queued, running, completed: finished but "
       "not received yet, delivered, cancelled) and its current turn. At most 2 KiB.",
       schema(json::object(), {}), &list_tool});
  return out;
}

}  // namespace

const std::vector<tool>& tools() {
  static const std::vector<tool> table = make_tools();
  return table;
}

const tool* find_tool(std::string_view name) {
  const std::vector<tool>& all = tools();
  const auto it = std::find_if(all.begin(), all.end(), [name](const tool& t) { return t.name == name; });
  return it == all.end() ? nullptr : &*it;
}

json tools_list() {
  json out = json::array();
  for (const tool& t : tools())
    out.push_back({{"name", t.name}, {"description", t.description}, {"inputSchema", t.input_schema}});
  return out;
}

std::string string_arg(const json& args, const char* key, bool required) {
  const auto it = args.find(key);
  if (it == args.end() || it->is_null()) {
    if (required) throw bad_arguments(std::string("`") + key + "` is required");
    return {};
  }
  if (!it->is_string()) throw bad_arguments(std::string("`") + key + "` must be a string");
  return it->get<std::string>();
}

}  // namespace handoff::cli::codex
