#include "cli/harness/copilot/transcript.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <exception>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/fs/posix_io.hpp"

namespace handoff::cli::copilot {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The end of the file (whole lines only), or "" when it cannot be read.
std::string transcript_tail(const fs::path& path) {
  unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return {};
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  const auto size = static_cast<std::size_t>(st.st_size);
  const std::size_t from = size > copilot_transcript_tail_bytes ? size - copilot_transcript_tail_bytes : 0;
  if (::lseek(fd.get(), static_cast<off_t>(from), SEEK_SET) < 0) return {};
  std::string text = read_all(fd.get(), copilot_transcript_tail_bytes, "the transcript");
  if (from > 0) text.erase(0, text.find('\n') == std::string::npos ? text.size() : text.find('\n') + 1);
  return text;
}

// The event's type, read from the line's start (`{"type":"X",...`) without parsing the line: a
// hook.start line holds a whole answer, and only three types are wanted.
std::string_view type_of(std::string_view line) {
  constexpr std::string_view key = "{\"type\":\"";
  if (!line.starts_with(key)) return {};
  line.remove_prefix(key.size());
  const std::size_t end = line.find('"');
  return end == std::string_view::npos ? std::string_view{} : line.substr(0, end);
}

std::optional<std::int64_t> integer_at(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number_integer()) return std::nullopt;
  return object[key].get<std::int64_t>();
}

std::string string_at(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) return {};
  return object[key].get<std::string>();
}

// One reading of the transcript.
copilot_call read_once(const fs::path& path, const std::string& agent_id) {
  copilot_call call;
  try {
    const std::string text = transcript_tail(path);
    std::vector<json> messages;  // assistant messages with tool requests, in order
    for (std::size_t at = 0; at < text.size();) {
      std::size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      const std::string_view line(text.data() + at, end - at);
      at = end + 1;
      const std::string_view type = type_of(line);
      if (type != "assistant.message" && type != "subagent.started" && type != "session.usage_record") continue;
      const json event = json::parse(line, nullptr, false);
      if (!event.is_object() || !event.contains("data") || !event["data"].is_object()) continue;
      const json& data = event["data"];
      if (type == "assistant.message") {
        if (data.contains("toolRequests") && data["toolRequests"].is_array() && !data["toolRequests"].empty())
          messages.push_back(data["toolRequests"]);
      } else if (type == "subagent.started") {
        if (string_at(event, "agentId") != agent_id) continue;
        call.call_id = string_at(data, "toolCallId");
        call.title = string_at(data, "agentDescription");
        call.background = string_at(data, "executionMode") == "background";
      } else if (data.contains("usage") && data["usage"].is_object() && !data["usage"].contains("parentToolCallId")) {
        // The parent's own model calls (a subagent's name its call): the latest is its context use.
        const json& usage = data["usage"];
        const std::optional<std::int64_t> in = integer_at(usage, "inputTokens");
        const std::optional<std::int64_t> out = integer_at(usage, "outputTokens");
        if (in) call.tokens = *in + out.value_or(0);
        if (const std::optional<std::int64_t> window = integer_at(usage, "maxPromptTokens")) call.window = window;
      }
    }
    if (call.call_id.empty() || call.background) return call;
    for (const json& requests : messages) {
      bool mine = false;
      std::vector<std::string> others;
      for (const json& r : requests) {
        const std::string id = string_at(r, "toolCallId");
        if (id == call.call_id) {
          mine = true;
          continue;
        }
        const json args = r.is_object() && r.contains("arguments") ? r["arguments"] : json();
        if (string_at(r, "name") == "task" && !id.empty() && string_at(args, "mode") != "background")
          others.push_back(id);
      }
      if (mine) call.siblings = std::move(others);
    }
  } catch (const std::exception&) {
    // What cannot be read is left out: no siblings, static caps.
  }
  return call;
}

}  // namespace

std::optional<task_call> find_task_call(const fs::path& path, const json& arguments, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    std::optional<task_call> found;
    try {
      const std::string text = transcript_tail(path);
      for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string_view line(text.data() + at, end - at);
        at = end + 1;
        if (type_of(line) != "assistant.message") continue;
        const json event = json::parse(line, nullptr, false);
        if (!event.is_object() || !event.contains("data") || !event["data"].is_object()) continue;
        const json& requests = event["data"].contains("toolRequests") ? event["data"]["toolRequests"] : json();
        if (!requests.is_array()) continue;
        for (const json& r : requests)
          if (string_at(r, "name") == "task" && r.contains("arguments") && r["arguments"] == arguments &&
              !string_at(r, "toolCallId").empty())
            found = task_call{string_at(r, "toolCallId"), string_at(event, "agentId")};
      }
    } catch (const std::exception&) {
      // Unreadable: not found.
    }
    if (found || std::chrono::steady_clock::now() >= deadline) return found;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // Copilot's writer is an event we cannot await
  }
}

copilot_call read_copilot_call(const fs::path& path, const std::string& agent_id, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    copilot_call call = read_once(path, agent_id);
    if (!call.call_id.empty() || std::chrono::steady_clock::now() >= deadline) return call;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // Copilot's writer is an event we cannot await
  }
}

}  // namespace handoff::cli::copilot
