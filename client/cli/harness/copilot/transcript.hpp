// What `handoff hook copilot` reads of a GitHub Copilot CLI 1.0.102 session: its transcript
// (the hook input's transcriptPath, `events.jsonl`, one JSON event a line, 0600), which Copilot
// writes before the subagentStop hooks run:
//   assistant.message     {data: {toolRequests: [{toolCallId, name: "task", arguments: {mode, ...}}]}}:
//                         the turn that called the tasks, written before they run
//   subagent.started      {agentId, data: {toolCallId, agentDescription, executionMode: "sync" |
//                         "background"}}: which call a child (agentId) answers
//   session.usage_record  {data: {usage: {inputTokens, outputTokens, maxPromptTokens,
//                         parentToolCallId?}}}: a model call's tokens; a subagent's names its call
// Copilot runs a turn's task calls in parallel and each child's subagentStop hook as that child
// finishes, in processes of their own; the calls of one assistant message are the siblings
// that share a budget. It writes the file a little behind its events (measured: in a session's
// first seconds the file did not exist yet when a hook started, and held the child's
// subagent.started 2-26 ms later), so the hook reads it again until that event is there.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace handoff::cli::copilot {

inline constexpr std::size_t copilot_transcript_tail_bytes = 16 << 20;  // read at most this much, bytes
// How long the hook reads the transcript again for its child's subagent.started (every 20 ms);
// then it goes on without it (the child alone, by its agentId).
inline constexpr std::chrono::milliseconds copilot_transcript_patience{2000};

struct copilot_call {
  std::string call_id;                 // the task call's toolCallId; "" when the transcript names none
  std::string title;                   // its description (agentDescription), may be ""
  bool background = false;             // a background agent (its answer reaches the model by read_agent)
  std::vector<std::string> siblings;   // the other foreground task calls of the same assistant message
  std::optional<std::int64_t> tokens;  // the parent's context use: its latest model call's input + output
  std::optional<std::int64_t> window;  // that call's maxPromptTokens
};

// The call child `agent_id` answers, from the end of the transcript at `path` (not followed
// through a symlink, at most copilot_transcript_tail_bytes), read again until it names the
// child or `patience` has passed. Never throws: what cannot be read is left out.
copilot_call read_copilot_call(const std::filesystem::path& path, const std::string& agent_id,
                               std::chrono::milliseconds patience = copilot_transcript_patience);

// A task call of the transcript: its toolCallId, and whose it is (the agentId of the assistant
// message that made it; "" for the session's own).
struct task_call {
  std::string call_id;
  std::string agent;
};

// The latest task call whose arguments are `arguments` (a postToolUseFailure names its call by
// them alone), read as read_copilot_call reads; nullopt when none is found within `patience`.
std::optional<task_call> find_task_call(const std::filesystem::path& path, const nlohmann::json& arguments,
                                        std::chrono::milliseconds patience = copilot_transcript_patience);

}  // namespace handoff::cli::copilot
