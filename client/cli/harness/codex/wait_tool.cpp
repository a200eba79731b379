// subagent_wait: one batch from handoffd for the turns the wait covers (children.hpp's
// wait_ids), projected for Codex's shell (reader "codex") and kept under the cut Codex applies to
// one MCP output (codex_env.hpp), less notes_bytes for the notes that follow it; with the
// parent's context use from its rollout. At most 64 turns per call (handoffd's cap); the rest
// are named in a note. With no handoffd to be had, the results come from local_wait.hpp.
#include <algorithm>
#include <chrono>
#include <thread>

#include "cli/harness/codex/codex_env.hpp"
#include "cli/harness/codex/local_wait.hpp"
#include "cli/harness/codex/tool_handlers.hpp"
#include "engine/text/reader_profile.hpp"

namespace handoff::cli::codex {
namespace {

using nlohmann::json;

constexpr std::size_t notes_bytes = 1024;       // kept under Codex's cut for the notes after a batch
constexpr std::size_t max_wait_ids = 64;        // handoffd's cap on childIds
constexpr std::int64_t max_timeout_ms = 86'400'000;
constexpr int wait_attempts = 5;                // handoffd lost mid-wait: waits again this often

std::vector<std::string> asked_ids(const json& args) {
  std::vector<std::string> out;
  if (const auto it = args.find("ids"); it != args.end() && !it->is_null()) {
    if (!it->is_array()) throw bad_arguments("`ids` must be an array of strings");
    for (const json& one : *it) {
      if (!one.is_string()) throw bad_arguments("`ids` must be an array of strings");
      out.push_back(one.get<std::string>());
    }
  }
  return out;
}

std::optional<std::int64_t> timeout_of(const json& args) {
  const auto it = args.find("timeoutMs");
  if (it == args.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > max_timeout_ms)
    throw bad_arguments("`timeoutMs` must be an integer from 0 to 86400000");
  return it->get<std::int64_t>();
}

// What follows the batch: who is still running, what did not fit or was not waited for.
std::string with_notes(const rpc::wait_result& r, const std::vector<std::string>& left) {
  std::vector<std::string> notes;
  if (!r.pending.empty()) notes.push_back("Still running: " + joined(r.pending) + ". Call subagent_wait again for them.");
  if (r.batch.deferred > 0)
    notes.push_back(std::to_string(r.batch.deferred) +
                    (r.batch.deferred == 1 ? " finished result did not" : " finished results did not") +
                    " fit in this answer; call subagent_wait again for the rest.");
  if (!r.already_delivered.empty()) notes.push_back("Already received earlier: " + joined(r.already_delivered) + ".");
  if (!r.cancelled.empty()) notes.push_back("Cancelled: " + joined(r.cancelled) + ".");
  if (!left.empty()) notes.push_back("Not waited for (at most 64 per call): " + joined(left) + ".");
  std::string text = r.batch.text;
  for (std::string& note : notes) {
    if (note.size() > notes_bytes / 2) note = note.substr(0, notes_bytes / 2 - 4) + " ...";
    text += (text.empty() ? "" : "\n\n") + note;
  }
  return text.empty() ? std::string("No results.") : text;
}

}  // namespace

std::optional<std::string> wait_tool(tool_context& ctx, const tool_call& call) {
  const std::vector<std::string> asked = asked_ids(call.args);
  const std::optional<std::int64_t> timeout = timeout_of(call.args);
  std::vector<std::string> ids = ctx.children.wait_ids(call.parent, asked);
  if (ids.empty()) return "No subagent of this thread has a result you have not received.";
  std::vector<std::string> left;
  if (ids.size() > max_wait_ids) {
    left.assign(ids.begin() + max_wait_ids, ids.end());
    ids.resize(max_wait_ids);
  }
  rpc::wait_params p;
  p.parent_id = call.parent;
  p.child_ids = ids;
  p.timeout_ms = timeout;
  p.usage = codex_thread_usage(ctx.codex_home, call.parent);
  p.reader = std::string(codex_reader.name);
  const std::size_t cut = codex_output_bytes(ctx.codex_home, ctx.output_bytes);
  p.max_bytes = static_cast<std::int64_t>(std::max<std::size_t>(
      cut > notes_bytes ? cut - notes_bytes : 0, static_cast<std::size_t>(rpc::min_wait_max_bytes)));
  // handoffd lost mid-wait (killed, restarted) took nothing: wait again on the one that
  // answers next (started when none does), a few times.
  rpc::wait_result r;
  for (int attempt = 1;; ++attempt) {
    std::string why;
    std::optional<client::connection> conn = connect_for_tool(ctx, why);
    try {
      if (!conn) throw client::client_error(client::error_kind::daemon_absent, why);
      ctx.children.announce(call.parent, *conn);
      r = conn->wait(p, call.cancel);
      break;
    } catch (const client::client_error& e) {
      if (e.kind() == client::error_kind::rpc && e.code() == rpc::errc::request_cancelled) return std::nullopt;
      const bool lost = e.kind() == client::error_kind::daemon_absent || e.kind() == client::error_kind::refused ||
                        e.kind() == client::error_kind::io ||
                        (e.kind() == client::error_kind::rpc && e.code() == rpc::errc::shutting_down);
      if (lost && attempt == wait_attempts && !call.cancel.raised())
        return local_wait(ctx, call, ids, timeout, cut, e.what());
      if (!lost || call.cancel.raised())
        throw std::runtime_error(std::string(e.what()) +
                                 ". Nothing is lost: the subagents' results are kept; call subagent_wait again.");
      // A restarting handoffd needs a moment to listen again: back off 200 ms more each time.
      std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempt));
    }
  }
  std::vector<std::string> received;
  for (const rpc::section_dto& s : r.batch.sections) received.push_back(s.child_id);
  for (const auto* list : {&r.already_delivered, &r.cancelled, &r.forgotten})
    received.insert(received.end(), list->begin(), list->end());
  ctx.children.mark_received(call.parent, received);
  return with_notes(r, left);
}

}  // namespace handoff::cli::codex
