// What a UserPromptSubmit hook of Claude Code 2.1.328 and 2.1.332 is handed when a background agent ends:
// not a prompt the user typed, but Claude Code's own notice carrying the agent's report.
//
//   <task-notification>\n<task-id>ID</task-id>\n...<result>REPORT</result>...  (default and
//     acceptEdits modes): REPORT is the agent's final text, cut by Claude Code to its first and
//     last 50,000 characters when longer ("... [N characters truncated] ...");
//   <agent-message from="ID">\n[Subagent hand-back] ... The report follows:\nREPORT  (auto mode,
//     the agent's SubagentHandback call): REPORT indented two spaces, or from about 83.5 KB on a
//     <persisted-output> head-only preview of 2 KB.
//
// Anything else (a prompt the user typed, the wake-up of an asyncRewake hook, whose notification
// has a <summary> and no <task-id>, a notice with anything after it) is `other`. The ID is the agent's id (SubagentStop's
// `agent_id`), at most max_agent_id_bytes of [A-Za-z0-9_-]; a notice naming anything else is
// `other` too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace handoff::cli::claude_code {

inline constexpr std::size_t max_agent_id_bytes = 128;

enum class notice_kind {
  other,              // not an agent's report
  task_notification,  // <task-notification> with a <task-id> and a <result>
  hand_back,          // <agent-message from=...> [Subagent hand-back]
};

struct agent_notice {
  notice_kind kind = notice_kind::other;
  std::string agent_id;  // the agent the report is from
  // The report as Claude Code shows it, the hand-back's two-space indent taken off each line
  // (the report's own text, when Claude Code showed all of it).
  std::string report;
  // Claude Code showed less than the whole report: its "characters truncated" cut, or a
  // persisted-output preview.
  bool cut = false;
  // The line Claude Code draws for the notice (`Agent "audit a" finished`): the notification's
  // <summary>, control characters made spaces, at most max_summary_bytes; empty for a hand-back,
  // which has none.
  std::string summary;
};

inline constexpr std::size_t max_summary_bytes = 200;

agent_notice parse_agent_notice(std::string_view prompt);

// `text` as one line of at most `max_bytes` for the user's screen: control characters (line
// breaks, escapes) made spaces, cut before a character that would not fit whole.
std::string screen_line(std::string_view text, std::size_t max_bytes);

// True when `id` may name an agent: 1..max_agent_id_bytes of [A-Za-z0-9_-] (also a file name).
bool plausible_agent_id(std::string_view id) noexcept;

}  // namespace handoff::cli::claude_code
