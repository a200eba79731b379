#include "cli/harness/codex/exec_events.hpp"

#include <nlohmann/json.hpp>

#include "cli/harness/codex/child_text.hpp"

namespace handoff::cli::codex {
namespace {

using nlohmann::json;

constexpr std::size_t preview_bytes = 2048;

// A one-line summary of a `codex exec --json` item.
std::string activity_of(const json& item) {
  const std::string type = item.value("type", "");
  if (type == "agent_message") return item.value("text", "");
  if (type == "command_execution") return "$ " + item.value("command", "");
  if (type == "reasoning") return item.value("text", "");
  if (type == "file_change") return "changed files";
  if (type == "mcp_tool_call") return "tool " + item.value("tool", "");
  return type;
}

}  // namespace

std::optional<exec_event> read_exec_event(std::string_view line) {
  const json event = json::parse(line, nullptr, false);
  if (!event.is_object()) return std::nullopt;
  try {
    const std::string type = event.value("type", "");
    if (type == "thread.started") return exec_event{event.value("thread_id", ""), std::nullopt};
    if (type == "item.completed" && event.contains("item") && event["item"].is_object())
      return exec_event{"", tail_text(valid_text(activity_of(event["item"])), preview_bytes)};
  } catch (const json::exception&) {
    // A field of another type than Codex writes: the line is skipped.
  }
  return std::nullopt;
}

}  // namespace handoff::cli::codex
