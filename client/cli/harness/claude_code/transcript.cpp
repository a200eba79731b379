#include "cli/harness/claude_code/transcript.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

#include <nlohmann/json.hpp>

namespace handoff::cli::claude_code {
namespace {

using nlohmann::json;

// The file's last `most` bytes, starting after the first newline in them when cut.
std::string read_tail(const std::filesystem::path& path, std::size_t most) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  std::string out;
  struct stat st{};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    const auto size = static_cast<std::size_t>(st.st_size);
    const std::size_t start = size > most ? size - most : 0;
    out.resize(size - start);
    std::size_t got = 0;
    while (got < out.size()) {
      const ssize_t n = ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(start + got));
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    out.resize(got);
    if (start > 0) {
      const std::size_t newline = out.find('\n');
      out.erase(0, newline == std::string::npos ? out.size() : newline + 1);
    }
  }
  ::close(fd);
  return out;
}

std::int64_t tokens_of(const json& usage, const char* key) {
  const auto it = usage.find(key);
  return it != usage.end() && it->is_number_integer() ? std::max<std::int64_t>(0, it->get<std::int64_t>()) : 0;
}

// A main-conversation assistant line, parsed; nullopt for anything else.
std::optional<json> assistant_line(std::string_view line) {
  if (line.find("\"assistant\"") == std::string_view::npos) return std::nullopt;  // most lines
  json entry = json::parse(line, nullptr, false);
  if (!entry.is_object() || entry.value("type", "") != "assistant" || entry.value("isSidechain", false))
    return std::nullopt;
  if (!entry.contains("message") || !entry["message"].is_object()) return std::nullopt;
  return entry;
}

}  // namespace

transcript_turn read_transcript_turn(const std::filesystem::path& path, const std::string& tool_use_id) {
  transcript_turn turn;
  const std::string tail = read_tail(path, max_transcript_tail_bytes);
  // Lines from the end: the first assistant line gives the usage; the lines of one message
  // (adjacent, one per block, the same id) are gathered until the id changes, and the message
  // whose lines hold the tool call is the turn.
  std::vector<json> message_lines;
  std::string message_id;
  bool found = false;
  const auto holds_call = [&](const json& entry) {
    const json& message = entry["message"];
    if (!message.contains("content") || !message["content"].is_array()) return false;
    const json& content = message["content"];
    return std::any_of(content.begin(), content.end(), [&](const json& b) {
      return b.is_object() && b.value("type", "") == "tool_use" && b.value("id", "") == tool_use_id;
    });
  };
  std::size_t end = tail.size();
  while (end > 0) {
    const std::size_t cut = tail.rfind('\n', end - 1);
    const std::size_t begin = cut == std::string::npos ? 0 : cut + 1;
    const std::string_view line(tail.data() + begin, end - begin);
    end = cut == std::string::npos ? 0 : cut;
    std::optional<json> entry = assistant_line(line);
    if (!entry) continue;
    const json& message = (*entry)["message"];
    const std::string id = message.value("id", "");
    if (!turn.context_tokens && message.contains("usage") && message["usage"].is_object()) {
      const json& usage = message["usage"];
      turn.context_tokens = tokens_of(usage, "input_tokens") + tokens_of(usage, "cache_read_input_tokens") +
                            tokens_of(usage, "cache_creation_input_tokens") + tokens_of(usage, "output_tokens");
    }
    if (id != message_id || id.empty()) {
      if (found) break;  // past the turn's first line
      message_lines.clear();
      message_id = id;
    }
    if (tool_use_id.empty()) {
      if (turn.context_tokens) break;  // the usage alone was asked for
      continue;
    }
    found = found || holds_call(*entry);
    message_lines.push_back(std::move(*entry));
  }
  if (!found) message_lines.clear();
  std::reverse(message_lines.begin(), message_lines.end());
  for (const json& entry : message_lines) {
    const json& content = entry["message"].contains("content") ? entry["message"]["content"] : json();
    if (!content.is_array()) continue;
    for (const json& block : content) {
      if (!block.is_object() || block.value("type", "") != "tool_use" || block.value("name", "") != "Agent") continue;
      agent_call call;
      call.tool_use_id = block.value("id", "");
      const json& input = block.contains("input") && block["input"].is_object() ? block["input"] : json::object();
      if (input.contains("description") && input["description"].is_string()) call.description = input["description"];
      call.background = input.contains("run_in_background") && input["run_in_background"].is_boolean() &&
                        input["run_in_background"].get<bool>();
      if (!call.tool_use_id.empty()) turn.agents.push_back(std::move(call));
    }
  }
  return turn;
}

}  // namespace handoff::cli::claude_code
