// The hand-over between handoff's two UserPromptSubmit hooks in Claude Code: the gate (a sync
// hook, which may block a notice) and the deliverer (an asyncRewake hook, which may wake the
// model with a message). Both run for the same prompt at the same time, in separate processes;
// a notice may be blocked only once its bounded replacement is safely here, and what is here
// is handed to the model once.
//
// One private directory per Claude Code session, <base>/<session>/ (base: spool_base()), 0700,
// never followed through a symlink, holding 0600 files:
//   lock                     flock'ed by whoever reads or changes the rest
//   pending-<ns>.json        a bounded copy to hand over: {"children": [ids], "text": ...},
//                            written whole and fsynced before the gate blocks its notice
//   delivered-<ns>.json      the same once a deliverer printed it (kept delivered_keep, so a
//                            sibling's notice can see its report already went out)
//   passed-<agent>           an agent whose long report the gate let through unbounded (handoffd
//                            did not answer): a later gate cancels it in handoffd, so it is not
//                            handed over a second time with another agent's report
//   decision-<key>           the gate's decision on one prompt, "block" or "pass", which that
//                            prompt's deliverer waits for (removed by it)
//   started-<key>            that prompt's deliverer runs: the gate blocks a notice only then
//                            (removed by the deliverer)
//   report-<child>           the last bytes of a report capture completed in handoffd, by which
//                            the gate knows the notice that shows it
//   local-<agent>            the whole report capture could not hand to handoffd (not reached):
//                            the gate cuts it itself if handoffd is still not there
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/fs/posix_io.hpp"

namespace handoff::cli::claude_code {

inline constexpr std::chrono::hours delivered_keep{24};      // delivered-* and stale decision-* files
inline constexpr std::size_t max_spool_file_bytes = 1 << 20;  // a spool file longer than this is ignored
inline constexpr std::size_t max_local_report_bytes = 64 << 20;  // local-<agent>: handoffd's finalText cap
inline constexpr std::size_t report_tail_bytes = 256;           // what report-<child> keeps of a report
inline constexpr std::chrono::seconds spool_lock_wait{10};       // then open_locked gives up (throws)

// ${XDG_STATE_HOME:-$HOME/.local/state}/handoff/claude-code; empty when neither is set.
std::filesystem::path spool_base();

// sha256 of the session and the prompt, 32 hex: names one prompt's decision.
std::string prompt_key(const std::string& session_id, std::string_view prompt);

struct spool_entry {
  std::string name;                   // pending-<ns>.json
  std::vector<std::string> children;  // the handoffd children whose bounded copies it holds
  std::string text;                   // what the model is given
};

class report_spool {
 public:
  // The session's spool, locked (flock, exclusive) until destroyed. `create`: make the
  // directories when missing; else nullopt when there is none yet. Throws std::runtime_error
  // (an unsafe directory, an unusable base).
  static std::optional<report_spool> open_locked(const std::filesystem::path& base, const std::string& session_id,
                                                 bool create);

  // `child` is in a pending or delivered copy.
  bool holds(const std::string& child) const;
  // Adds a pending copy, durably (written, fsynced, renamed, directory fsynced). Throws fs_error.
  void put(const std::vector<std::string>& children, const std::string& text);
  // Pending copies, oldest first.
  std::vector<spool_entry> pending() const;
  // `e` was handed over: it becomes delivered. Old delivered copies and decisions are removed.
  void mark_delivered(const spool_entry& e);

  // capture: `child` (an agent's report in handoffd) ends with `text`'s last report_tail_bytes.
  void note_report(const std::string& child, std::string_view text);
  // The newest report of `agent_id` capture noted whose tail `shown` ends with (any, newest first,
  // when `any`); nullopt when none.
  std::optional<std::string> report_shown(const std::string& agent_id, std::string_view shown, bool any) const;

  // capture, handoffd not reached: the agent's whole report (at most 64 MiB, as handoffd takes),
  // for the gate to cut itself. Throws fs_error.
  void keep_local_report(const std::string& agent_id, std::string_view text);
  // That report when `shown` ends with its tail (any, when `any`), as report_shown matches.
  std::optional<std::string> local_report(const std::string& agent_id, std::string_view shown, bool any) const;
  void forget_local_report(const std::string& agent_id);

  void note_passed(const std::string& agent_id);
  std::vector<std::string> passed() const;
  void forget_passed(const std::string& agent_id);

  // The gate's decision on the prompt `key` ("block" or "pass"), durable before the gate answers.
  void decide(const std::string& key, const std::string& decision);
  // That decision, read without the lock (it is written whole); nullopt while there is none.
  static std::optional<std::string> decision(const std::filesystem::path& base, const std::string& session_id,
                                             const std::string& key);
  static void forget_decision(const std::filesystem::path& base, const std::string& session_id, const std::string& key);
  // The deliverer of prompt `key` says it runs (creating the session's spool when missing).
  static void note_started(const std::filesystem::path& base, const std::string& session_id, const std::string& key);
  bool started(const std::string& key) const;

 private:
  report_spool(unique_fd dir, unique_fd lock) : dir_(std::move(dir)), lock_(std::move(lock)) {}
  std::vector<std::string> names(std::string_view prefix) const;
  std::optional<spool_entry> read_entry(const std::string& name) const;
  unique_fd dir_;
  unique_fd lock_;
};

}  // namespace handoff::cli::claude_code
