// What `handoff mcp` learns about the Codex that started it: its home, the binary its subagents
// run, how much of one MCP tool output its model sees whole, and the parent thread's context use.
// Measured with Codex CLI 0.169.0 (docs/codex.md).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "protocol/messages.hpp"

namespace handoff::cli::codex {

// $CODEX_HOME (setup codex passes it in the server's env), else ~/.codex.
std::filesystem::path codex_home();

// The codex the subagents run: $HANDOFF_CODEX, else `codex` on $PATH, else the binary Codex's own
// `codex-arg0` helper links on $PATH point to (Codex puts them first on its servers' PATH).
// Empty when none is found.
std::filesystem::path codex_binary();

// The most bytes of one MCP tool output Codex 0.169.0 gives its model whole: 1.2 x its limit,
// less the 36 bytes it keeps for its marker. The limit is `tool_output_token_limit` x 4 bytes when
// config.toml sets that top-level key, else 10,000 bytes: what Codex allows a model it has no
// metadata for (its catalog models get 10,000 tokens, 40,000 bytes; which model is a catalog one
// the server cannot know, so it assumes the smaller). `forced`, when not 0, is the answer
// ($HANDOFF_CODEX_OUTPUT_BYTES).
std::size_t codex_output_bytes(const std::filesystem::path& home, std::size_t forced);

// The parent thread's context use from its rollout (sessions/YYYY/MM/DD/rollout-*-THREAD.jsonl):
// its latest token_count event's last_token_usage (total_tokens, else input + output) and
// model_context_window. nullopt when there is no rollout or no such event yet.
std::optional<rpc::usage_dto> codex_thread_usage(const std::filesystem::path& home, const std::string& thread_id);

}  // namespace handoff::cli::codex
