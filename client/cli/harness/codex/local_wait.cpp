#include "cli/harness/codex/local_wait.hpp"

#include <algorithm>
#include <chrono>
#include <exception>

#include "cli/harness/core/local_bound.hpp"
#include "engine/text/batch.hpp"
#include "engine/text/reader_profile.hpp"

namespace handoff::cli::codex {
namespace {

constexpr std::string_view separator = "\n\n---\n\n";  // between sections, as in a batch

std::string header_of(const children::held_turn& t) {
  batch_input in;
  in.child_id = t.id;
  in.title = t.title;
  in.status = t.phase == phase::cancelled ? result_status::cancelled
                                          : parse_result_status(t.status).value_or(result_status::error);
  in.error = t.error;
  return section_header(in);
}

// The answer as it is when it fits `share`, else its head and tail with a private copy named.
std::string body_of(const std::string& text, std::size_t share, const std::string& why) {
  const surface_caps caps = framed_caps(surface_caps::wait(), codex_reader);
  if (fits(text, projection_limits{std::min(caps.per_result_bytes, share), caps.max_lines})) return text;
  const std::filesystem::path copy = hook_core::keep_unbounded_copy(text);
  return hook_core::local_head_tail(text, codex_reader, copy, why, share);
}

}  // namespace

std::optional<std::string> local_wait(tool_context& ctx, const tool_call& call, const std::vector<std::string>& ids,
                                      std::optional<std::int64_t> timeout_ms, std::size_t most_bytes,
                                      const std::string& why) {
  std::optional<std::chrono::steady_clock::time_point> until;
  if (timeout_ms) until = std::chrono::steady_clock::now() + std::chrono::milliseconds(*timeout_ms);
  const std::vector<children::held_turn> turns = ctx.children.await_ended(call.parent, ids, until, call.cancel);
  if (call.cancel.raised()) return std::nullopt;

  const std::string line_why = "handoff's daemon was not reached (" + hook_core::one_line(why) + ")";
  std::vector<const children::held_turn*> ended;
  std::vector<std::string> running, held_by_daemon;
  for (const children::held_turn& t : turns) {
    if (t.phase != phase::finished && t.phase != phase::cancelled) running.push_back(t.id);
    else if (t.reported) held_by_daemon.push_back(t.id);
    else ended.push_back(&t);
  }
  // Each result's share of what the output may hold; those that get less than the least share
  // wait for the next call.
  const std::size_t notes = 1024;  // the line and at most four notes, each cut below
  const std::size_t room = most_bytes > notes ? most_bytes - notes : 0;
  const std::size_t fit = std::max<std::size_t>(1, room / (local_min_share + 256));  // 256: its header
  std::vector<std::string> later;
  while (ended.size() > fit) {
    later.push_back(ended.back()->id);
    ended.pop_back();
  }
  std::size_t framing = 0;
  for (const children::held_turn* t : ended) framing += header_of(*t).size() + separator.size();
  const std::size_t share = ended.empty() ? 0 : (room > framing ? room - framing : 0) / ended.size();

  std::string text;
  std::vector<std::string> received, failed;
  for (const children::held_turn* t : ended) {
    std::string section = header_of(*t);
    try {
      if (t->phase == phase::finished) section += body_of(t->final_text, std::max(share, local_min_share), line_why);
    } catch (const std::exception& e) {
      failed.push_back(t->id + " (" + hook_core::one_line(e.what()) + ")");
      continue;
    }
    text += (text.empty() ? "" : std::string(separator)) + section;
    received.push_back(t->id);
  }
  ctx.children.mark_received(call.parent, received);

  // The line (at most ~250 bytes: the reason is cut to 160), then the notes, each cut to 190.
  text += std::string(text.empty() ? "" : "\n\n") + "[handoff: " + line_why + "; handoff mcp gave these results itself]";
  std::vector<std::string> notes_out;
  if (!running.empty()) notes_out.push_back("Still running: " + joined(running) + ". Call subagent_wait again for them.");
  if (!later.empty())
    notes_out.push_back("Finished, not in this answer (no room): " + joined(later) + ". Call subagent_wait again for them.");
  if (!held_by_daemon.empty())
    notes_out.push_back("Held by handoffd, which was not reached: " + joined(held_by_daemon) +
                        ". Call subagent_wait again once it runs; nothing is lost.");
  if (!failed.empty())
    notes_out.push_back("Not given (no private copy could be written): " + joined(failed) +
                        ". Call subagent_wait again once handoffd runs; nothing is lost.");
  for (std::string& note : notes_out) {
    note = hook_core::one_line(note, 190);
    text += "\n\n" + note;
  }
  return text;
}

}  // namespace handoff::cli::codex
