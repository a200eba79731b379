// What a Claude Code session transcript (the JSONL file at a hook's `transcript_path`) says
// that handoff's hook needs: the parent's latest context use and the Agent calls of one
// assistant turn.
//
// Claude Code 2.1.328 appends one JSON object per line; an assistant message is written as one
// line per content block, each with the same `message.id`, `message.usage` (input_tokens,
// cache_read_input_tokens, cache_creation_input_tokens, output_tokens) and `isSidechain` false
// for the main conversation (a subagent's own turns are kept in other files). Only the last
// max_transcript_tail_bytes of the file are read, from the end: the turn that is running is at
// its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace handoff::cli::claude_code {

inline constexpr std::size_t max_transcript_tail_bytes = 8 << 20;  // read at most this much, bytes

// One Agent tool call of the turn.
struct agent_call {
  std::string tool_use_id;   // the tool_use block's id (handoff's child id)
  std::string description;   // its input's description (the child's title), may be empty
  bool background = false;   // its input asks run_in_background: true
};

struct transcript_turn {
  // The latest main-conversation assistant message's context use: every input token kind
  // plus its output. nullopt when none was found.
  std::optional<std::int64_t> context_tokens;
  // The Agent calls of the assistant message that holds `tool_use_id`, in order (that one
  // included); empty when it was not found or `tool_use_id` is empty (the usage alone).
  std::vector<agent_call> agents;
};

// Reads the transcript at `path` (a regular file, not followed through a symlink). Never
// throws: what cannot be read or parsed is left out.
transcript_turn read_transcript_turn(const std::filesystem::path& path, const std::string& tool_use_id);

}  // namespace handoff::cli::claude_code
