#include "cli/harness/claude_code/notice.hpp"

#include <algorithm>
#include <cctype>

#include "utf8.hpp"

namespace handoff::cli::claude_code {
namespace {


// The text between `open` and the first `close` after it, from `from`; npos-empty when absent.
std::string_view between(std::string_view s, std::string_view open, std::string_view close) {
  const std::size_t a = s.find(open);
  if (a == std::string_view::npos) return {};
  const std::size_t b = s.find(close, a + open.size());
  if (b == std::string_view::npos) return {};
  return s.substr(a + open.size(), b - a - open.size());
}

// Claude Code's own cut marker: "... [71672 characters truncated] ...".
bool has_truncation_marker(std::string_view report) {
  static constexpr std::string_view tail = " characters truncated] ...";
  for (std::size_t at = report.find(tail); at != std::string_view::npos; at = report.find(tail, at + 1)) {
    std::size_t digits = at;
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(report[digits - 1]))) --digits;
    if (digits < at && digits >= 5 && report.substr(digits - 5, 5) == "... [") return true;
  }
  return false;
}

// `prompt` without the whitespace at its end ends with `tail`: the notice is the whole prompt.
bool ends_with_trimmed(std::string_view prompt, std::string_view tail) {
  while (!prompt.empty() && std::isspace(static_cast<unsigned char>(prompt.back()))) prompt.remove_suffix(1);
  return prompt.ends_with(tail);
}

// The hand-back's report as written: Claude Code indents every line by two spaces.
std::string unindented(std::string_view shown) {
  std::string out;
  out.reserve(shown.size());
  std::size_t at = 0;
  while (at <= shown.size()) {
    std::size_t end = shown.find('\n', at);
    if (end == std::string_view::npos) end = shown.size();
    std::string_view line = shown.substr(at, end - at);
    if (line.starts_with("  ")) line.remove_prefix(2);
    out.append(line);
    if (end == shown.size()) break;
    out.push_back('\n');
    at = end + 1;
  }
  return out;
}

agent_notice task_notification(std::string_view prompt) {
  agent_notice n;
  if (!ends_with_trimmed(prompt, "</task-notification>")) return n;
  const std::string_view id = between(prompt, "<task-id>", "</task-id>");
  const std::size_t open = prompt.find("<result>");
  const std::size_t close = prompt.rfind("</result>");
  if (!plausible_agent_id(id) || open == std::string_view::npos || close == std::string_view::npos ||
      close < open + 8)
    return n;
  n.kind = notice_kind::task_notification;
  n.agent_id = std::string(id);
  n.report = std::string(prompt.substr(open + 8, close - open - 8));
  n.cut = has_truncation_marker(n.report);
  n.summary = screen_line(between(prompt.substr(0, open), "<summary>", "</summary>"), max_summary_bytes);
  return n;
}

agent_notice hand_back(std::string_view prompt) {
  agent_notice n;
  if (!ends_with_trimmed(prompt, "</agent-message>")) return n;
  static constexpr std::string_view from = "<agent-message from=\"";
  const std::size_t end = prompt.find('"', from.size());
  if (end == std::string_view::npos) return n;
  const std::string_view id = prompt.substr(from.size(), end - from.size());
  static constexpr std::string_view follows = "The report follows:\n";
  const std::size_t body = prompt.find(follows);
  if (!plausible_agent_id(id) || prompt.find("[Subagent hand-back]") == std::string_view::npos ||
      body == std::string_view::npos)
    return n;
  n.kind = notice_kind::hand_back;
  n.agent_id = std::string(id);
  std::string_view report = prompt.substr(body + follows.size());
  if (const std::size_t close = report.rfind("</agent-message>"); close != std::string_view::npos)
    report = report.substr(0, close);
  while (report.ends_with("\n")) report.remove_suffix(1);
  n.cut = report.find("<persisted-output>") != std::string_view::npos;
  n.report = unindented(report);
  return n;
}

}  // namespace

std::string screen_line(std::string_view text, std::size_t max_bytes) {
  std::string out(text.substr(0, utf8_floor(text, max_bytes)));
  std::replace_if(out.begin(), out.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }, ' ');
  return out;
}

bool plausible_agent_id(std::string_view id) noexcept {
  return !id.empty() && id.size() <= max_agent_id_bytes && std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

agent_notice parse_agent_notice(std::string_view prompt) {
  if (prompt.starts_with("<task-notification>\n<task-id>")) return task_notification(prompt);
  if (prompt.starts_with("<agent-message from=\"")) return hand_back(prompt);
  return {};
}

}  // namespace handoff::cli::claude_code
