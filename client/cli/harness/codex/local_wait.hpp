// subagent_wait when no handoffd answers (none runs, none may be started, or it keeps failing):
// the verdict at the end of a long answer is still not lost. handoff mcp waits for the covered
// turns itself and gives each ended one under the same `Subagent ID "TITLE" finished.` header a
// batch has: an answer that fits its share as it is, a longer one as its head and tail cut here
// (core/local_bound.hpp's local_head_tail, for Codex's shell), with one line saying handoffd was
// not reached and where the full text is: a private copy in hook_core::unbounded_dir(), never in
// the artifact store, which handoffd alone owns (docs/design.md). The shares split `most_bytes`
// (Codex's cut on one output, less the notes) between the results, at least min_share each: the
// rest wait for the next call. What it gave is marked received; the reporter still hands each
// result to handoffd when one runs, which keeps it unwaited-for until it forgets it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/harness/codex/mcp_tools.hpp"

namespace handoff::cli::codex {

// The least share of one result: room for a head, a tail, the footer and the line.
inline constexpr std::size_t local_min_share = 2 * 1024;

// `ids`: the turns the wait covers (children::wait_ids); `timeout_ms` as subagent_wait's (none:
// until every one has ended); `why`: what failed with handoffd. nullopt when cancelled.
std::optional<std::string> local_wait(tool_context& ctx, const tool_call& call, const std::vector<std::string>& ids,
                                      std::optional<std::int64_t> timeout_ms, std::size_t most_bytes,
                                      const std::string& why);

}  // namespace handoff::cli::codex
