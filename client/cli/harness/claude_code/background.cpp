#include "cli/harness/claude_code/background.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "cli/harness/claude_code/notice.hpp"
#include "cli/harness/claude_code/spool.hpp"
#include "cli/harness/claude_code/transcript.hpp"
#include "cli/harness/core/local_bound.hpp"
#include "engine/text/batch.hpp"
#include "engine/text/reader_profile.hpp"

namespace handoff::cli::claude_code {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

bool is_rpc(const client::client_error& e, rpc::errc code) {
  return e.kind() == client::error_kind::rpc && e.code() == code;
}

// The latest report of `agent` handoffd holds (its check), or nullopt when it holds none.
std::optional<rpc::check_result> latest_report(client::connection& c, const std::string& parent,
                                               const std::string& agent) {
  std::optional<rpc::check_result> last;
  for (int n = 1; n <= max_reports_per_agent; ++n) {
    try {
      last = c.check({parent, report_child(agent, n)});
    } catch (const client::client_error& e) {
      if (is_rpc(e, rpc::errc::unknown_child) || is_rpc(e, rpc::errc::unknown_parent)) break;
      throw;
    }
  }
  return last;
}

// The agent's report as its own final answer: SubagentStop's last_assistant_message, or the
// message of its SubagentHandback call. Empty when the event carries none.
std::string report_text(const json& hook) {
  const std::string event = hook.value("hook_event_name", "");
  if (event == "SubagentStop") {
    const auto it = hook.find("last_assistant_message");
    return it != hook.end() && it->is_string() ? it->get<std::string>() : std::string();
  }
  if (event == "PreToolUse" && hook.value("tool_name", "") == "SubagentHandback") {
    const auto input = hook.find("tool_input");
    if (input == hook.end() || !input->is_object()) return {};
    const auto message = input->find("message");
    return message != input->end() && message->is_string() ? message->get<std::string>() : std::string();
  }
  return {};
}

// SubagentStop lists the session's background tasks: the agent's title is its description
// there. A foreground agent is not listed; its answer is its Agent call's tool result, bounded
// by the PostToolUse hook, so it is not captured here. nullopt: a foreground agent. (A
// SubagentHandback call comes from a background agent only.)
std::optional<std::string> background_title(const json& hook, const std::string& agent) {
  if (hook.value("hook_event_name", "") != "SubagentStop") return std::string();
  const auto tasks = hook.find("background_tasks");
  if (tasks == hook.end() || !tasks->is_array()) return std::nullopt;
  for (const json& t : *tasks)
    if (t.is_object() && t.value("id", "") == agent) {
      const auto d = t.find("description");
      return d != t.end() && d->is_string() ? d->get<std::string>() : std::string();
    }
  return std::nullopt;
}

// A notice the gate has to look at: one carrying a report Claude Code cut or that does not fit
// (capture held nothing else). Any other prompt passes at once, and its deliverer waits for no
// decision.
bool needs_gate(const agent_notice& notice) {
  return notice.kind != notice_kind::other && (notice.cut || !fits_unchanged(notice.report));
}

// Reports let through unbounded before (handoffd did not answer the gate): out of handoffd, so
// no later batch hands them over a second time. A passed agent's latest report is the one that
// passed: capture settles the record before it completes the agent's next report.
void settle_passed(report_spool& spool, client::connection& c, const std::string& session) {
  for (const std::string& agent : spool.passed()) {
    if (const auto r = latest_report(c, session, agent); r && r->state == "completed") c.cancel({session, {r->child_id}});
    spool.forget_passed(agent);
  }
}

struct gate_answer {
  bool block = false;
  std::string output;  // what the gate prints
};

// Blocks the notice. Claude Code draws "UserPromptSubmit operation blocked by hook:" and
// `reason` under it, and, with suppressOriginalPrompt, nothing of the notice (without it, the
// whole notice: markup and report, every line, measured in 2.1.328 and 2.1.332). `reason` is the
// one line the user sees instead of Claude Code's own `Agent "X" finished`: that line first, then
// what handoff did.
gate_answer block(const agent_notice& notice, const std::string& what) {
  const std::string reason = (notice.summary.empty() ? "Message from an agent" : notice.summary) + " · handoff " + what;
  return {true, dump(json{{"decision", "block"},
                          {"reason", reason},
                          {"hookSpecificOutput", {{"hookEventName", "UserPromptSubmit"}, {"suppressOriginalPrompt", true}}}})};
}

gate_answer already_delivered(const agent_notice& notice) {
  return block(notice, "delivered its report bounded, with another agent's");
}

// The notice (a long one: needs_gate) goes to the model as Claude Code made it, with one line
// saying so; and the user sees why under Claude Code's `Agent "X" finished` ("UserPromptSubmit
// says: ...", the systemMessage): one line, at most max_summary_bytes.
gate_answer pass(const std::string& why) {
  const std::string said = "handoff: this agent's report was not bounded (";
  return {false, dump(json{{"systemMessage", screen_line(said + why.substr(0, why.find('\n')) + ")", max_summary_bytes)},
                           {"hookSpecificOutput",
                            {{"hookEventName", "UserPromptSubmit"},
                             {"additionalContext",
                              "[" + said + why + "); Claude Code's own copy of it is all there is]"}}}})};
}

// Without capture's record of it (an older install captured it): `report` is the one `notice`
// shows when its size is the notice's (a notice shown whole) or the notice is cut.
bool shows(const agent_notice& notice, const rpc::check_result& report) {
  if (notice.cut) return true;
  // Claude Code may drop a report's final newline when it frames it.
  return report.bytes && *report.bytes >= notice.report.size() && *report.bytes <= notice.report.size() + 1;
}

// handoffd not reached (or it never got the report): the report capture kept, when the notice
// shows it, cut here (hook_core::local_head_tail for Claude Code's Read, the full text in a
// private copy), put in the spool and the notice blocked, as a copy from handoffd would be.
// nullopt when there is no such report or it cannot be cut.
std::optional<gate_answer> cut_locally(report_spool& spool, const agent_notice& notice, bool head_only,
                                       const std::string& why) {
  try {
    const std::optional<std::string> full = spool.local_report(notice.agent_id, notice.report, head_only);
    if (!full) return std::nullopt;
    const std::string line_why = "handoff's daemon was not reached (" + hook_core::one_line(why) + ")";
    const std::filesystem::path copy = hook_core::keep_unbounded_copy(*full);
    batch_input in;
    in.child_id = notice.agent_id;
    in.title = notice.summary;
    const std::string text = section_header(in) + hook_core::local_head_tail(*full, claude_code_reader, copy, line_why);
    spool.put({"local-" + notice.agent_id + "-" + copy.stem().string().substr(0, 12)}, text);
    spool.forget_local_report(notice.agent_id);
    // Should handoffd have taken it after all (it answers late): a later gate takes it out there.
    spool.note_passed(notice.agent_id);
    return block(notice, "cut its report itself, handoffd not reached: " + grouped(full->size()) + " -> " +
                             grouped(text.size()) + " bytes (full text kept)");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

gate_answer decide(report_spool& spool, const json& hook, const agent_notice& notice, const std::string& key,
                   const hook_settings& settings) {
  const std::string session = hook.value("session_id", "");
  // The report capture noted that this notice shows (its tail; an auto-mode preview shows only
  // the head: the agent's newest report). Already in a copy: nothing to ask handoffd.
  const bool head_only = notice.kind == notice_kind::hand_back && notice.cut;
  const std::optional<std::string> noted = spool.report_shown(notice.agent_id, notice.report, head_only);
  if (noted && spool.holds(*noted)) return already_delivered(notice);
  // Only a deliverer can hand a copy over: without one running for this prompt, blocking would
  // lose the report.
  const auto give_up = std::chrono::steady_clock::now() + settings.deliverer_wait;
  while (!spool.started(key) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!spool.started(key)) {
    spool.note_passed(notice.agent_id);
    return pass("no deliverer ran for it: is `handoff hook claude-code --deliver` installed?");
  }
  try {
    client::connection c = connect(settings, true);
    settle_passed(spool, c, session);
    const std::optional<rpc::check_result> report = latest_report(c, session, notice.agent_id);
    if (!report || (noted ? report->child_id != *noted : !shows(notice, *report))) {
      if (std::optional<gate_answer> cut = cut_locally(spool, notice, head_only, "it never got this report")) return *cut;
      return pass("its full text never reached handoffd");
    }
    if (spool.holds(report->child_id)) return already_delivered(notice);
    if (report->state != "completed" && report->state != "running")
      return pass("handoffd had already handed it over (" + report->state + ")");

    rpc::wait_params wait;
    wait.parent_id = session;
    wait.child_ids = {report->child_id};
    // Running: capture's completion is still being written; wait for it, within the budget.
    wait.timeout_ms = report->state == "running" ? settings.connect_budget.count() : 0;
    wait.with_ready = true;
    wait.reader = std::string(claude_code_reader.name);
    wait.usage = usage_of(read_transcript_turn(hook.value("transcript_path", ""), ""), settings);
    const rpc::wait_result taken = c.wait(wait);
    std::vector<std::string> children;
    const rpc::section_dto* mine = nullptr;
    for (const rpc::section_dto& s : taken.batch.sections) {
      children.push_back(s.child_id);
      if (s.child_id == report->child_id) mine = &s;
    }
    std::string text = taken.batch.text;
    const std::size_t full = report->bytes.value_or(mine != nullptr ? mine->total_bytes : 0);
    const bool still_running = !taken.pending.empty();
    if (mine == nullptr && still_running && text.empty()) {
      spool.note_passed(notice.agent_id);
      return pass("handoffd was still writing it");
    }
    if (mine == nullptr) {
      if (!text.empty()) text += "\n\n---\n\n";
      text += held_back_note(session, report->child_id, full);
      children.push_back(report->child_id);
    }
    spool.put(children, text);
    if (mine == nullptr)
      return block(notice, "held its " + grouped(full) + "-byte report back for this turn's budget (kept; the model is told how to get it)");
    return block(notice, "bounded its report: " + grouped(mine->total_bytes) + " -> " + grouped(mine->text.size()) +
                             " bytes (full text kept)");
  } catch (const std::exception& e) {
    if (std::optional<gate_answer> cut = cut_locally(spool, notice, head_only, e.what())) return *cut;
    try {
      spool.note_passed(notice.agent_id);
    } catch (const std::exception&) {
      // nothing more to do: at worst a later batch hands the report over a second time
    }
    return pass(std::string("handoffd: ") + e.what());
  }
}

}  // namespace

std::string report_child(const std::string& agent_id, int n) {
  return n <= 1 ? agent_id : agent_id + "." + std::to_string(n);
}

void capture_report(const json& hook, const hook_settings& settings) {
  const std::string parent = hook.value("session_id", "");
  const std::string agent = hook.value("agent_id", "");
  const std::string text = report_text(hook);
  // Headless, a notice is never replaced (hook.hpp): nothing would take the report.
  if (!settings.attended || parent.empty() || !plausible_agent_id(agent) || text.empty() || fits_unchanged(text)) return;
  const std::optional<std::string> title = background_title(hook, agent);
  if (!title) return;
  try {
    client::connection c = connect(settings, true);
    if (std::optional<report_spool> spool = report_spool::open_locked(settings.spool_base, parent, false))
      settle_passed(*spool, c, parent);
    rpc::completed_params done;
    done.parent_id = parent;
    done.title = *title;
    done.status = "done";
    done.final_text = text;
    for (int n = 1; n <= max_reports_per_agent; ++n) {
      done.child_id = report_child(agent, n);
      try {
        c.completed(done);
        try {
          if (std::optional<report_spool> spool = report_spool::open_locked(settings.spool_base, parent, true))
            spool->note_report(done.child_id, text);
        } catch (const std::exception&) {
          // the gate then knows the report by its size alone
        }
        return;
      } catch (const client::client_error& e) {
        if (!is_rpc(e, rpc::errc::conflict)) throw;  // an earlier, different report: the next name
      }
    }
  } catch (const std::exception&) {
    // Not held by handoffd: kept here, for the gate to cut itself (else it lets Claude Code's
    // notice through, saying so).
    try {
      if (std::optional<report_spool> spool = report_spool::open_locked(settings.spool_base, parent, true))
        spool->keep_local_report(agent, text);
    } catch (const std::exception&) {
      // the gate finds nothing and lets the notice through, saying so
    }
  }
}

std::string gate_notice(const json& hook, const hook_settings& settings) {
  const std::string prompt = hook.value("prompt", "");
  const agent_notice notice = parse_agent_notice(prompt);
  const std::string session = hook.value("session_id", "");
  if (!needs_gate(notice) || session.empty()) return {};
  // Headless, nothing can hand a copy over after a block (hook.hpp): the notice
  // passes, as Claude Code made it.
  if (!settings.attended) return pass("claude -p: a notice cannot be replaced there").output;
  std::optional<report_spool> spool;
  try {
    spool = report_spool::open_locked(settings.spool_base, session, true);
  } catch (const std::exception& e) {
    return pass(std::string("its spool: ") + e.what()).output;
  }
  const std::string key = prompt_key(session, prompt);
  const gate_answer answer = decide(*spool, hook, notice, key, settings);
  try {
    spool->decide(key, answer.block ? "block" : "pass");
  } catch (const std::exception&) {
    // The deliverer then waits out decision_wait and hands over what is pending anyway.
  }
  return answer.output;
}

bool deliver_reports(const json& hook, const hook_settings& settings,
                     const std::function<void(const std::string&)>& hand_over) {
  const std::string prompt = hook.value("prompt", "");
  const std::string session = hook.value("session_id", "");
  if (session.empty()) return false;
  if (needs_gate(parse_agent_notice(prompt)) && settings.attended) {
    // A notice: hand over nothing before its gate has decided (and put its copy in the spool).
    const std::string key = prompt_key(session, prompt);
    try {
      report_spool::note_started(settings.spool_base, session, key);
    } catch (const std::exception&) {
      return false;  // the gate, seeing no deliverer, lets the notice pass
    }
    const auto give_up = std::chrono::steady_clock::now() + settings.decision_wait;
    while (!report_spool::decision(settings.spool_base, session, key) && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    report_spool::forget_decision(settings.spool_base, session, key);
  }
  try {
    std::optional<report_spool> spool = report_spool::open_locked(settings.spool_base, session, false);
    if (!spool) return false;
    const std::vector<spool_entry> pending = spool->pending();
    if (pending.empty()) return false;
    std::string text;
    for (const spool_entry& e : pending) {
      if (!text.empty()) text += "\n\n---\n\n";
      text += e.text;
    }
    // Handed over, then marked: Claude Code takes the text only when the hook exits 2, so a
    // deliverer killed before it marks them hands over nothing and the copies stay pending for
    // the next one. Only a kill between the marking and the exit loses them.
    hand_over(text);
    for (const spool_entry& e : pending) {
      try {
        spool->mark_delivered(e);
      } catch (const std::exception&) {
        // Handed over all the same: at worst a later deliverer hands this copy over again.
      }
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace handoff::cli::claude_code
