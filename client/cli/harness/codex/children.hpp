// The subagents `handoff mcp` runs for Codex threads: each a real `codex exec` process on the same
// Codex home (so the same model providers and settings), whose exact final message goes to
// handoffd as the child's result, like every other harness's.
//
// Contract:
// - A child is a conversation of turns. spawn() runs its task as turn 1 under the child's id
//   (`cx-1a2b3c`); send() continues the same Codex thread (`codex exec resume`) as turn n, id
//   `cx-1a2b3c.n`, title "TITLE (turn n)". A turn waits behind its child's previous one, and
//   behind others while max_running turns run; queued turns start in order (scheduler.hpp).
// - Each turn runs on a thread of its own while its process lives (codex_exec.hpp), joined once
//   it ends (turn_threads.hpp); its result follows turn_outcome.hpp.
// - Each new turn is announced (`subagent/started`) at once when handoffd answers; announce()
//   repeats that for every turn not finished (a restarted handoffd has forgotten them), and every
//   finished turn's `subagent/completed` is retried until handoffd takes it (reporter.hpp): a
//   result is not lost to handoffd's restart. A turn's final text is dropped once handoffd took it.
// - cancel() kills a child's process group and tells handoffd; shutdown() does that for every
//   child still running (Codex closed the server), and each child dies with the server anyway
//   (PR_SET_PDEATHSIG).
// - What the parent has received is tracked per turn, and the children of each parent thread
//   are kept in the state directory (state_file.hpp), so a server started later for the same
//   thread still knows them.
// Thread-safe: every public member locks the one mutex that guards every child and turn.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/daemon_command.hpp"
#include "cli/harness/codex/reporter.hpp"
#include "cli/harness/codex/scheduler.hpp"
#include "cli/harness/codex/turn.hpp"
#include "cli/harness/codex/turn_outcome.hpp"
#include "cli/harness/codex/turn_threads.hpp"
#include "cli/harness/codex/views.hpp"

namespace handoff::cli::codex {

struct children_options {
  daemon_options daemon;               // handoffd's socket (empty: the default)
  std::filesystem::path codex;         // the codex binary (codex_env.hpp)
  std::filesystem::path state_dir;     // per-thread state and the turns' files
  std::size_t max_running = 4;         // turns running at once ($HANDOFF_CODEX_MAX_RUNNING, 1..32)
  std::chrono::seconds turn_timeout{3600};  // one turn at most ($HANDOFF_CODEX_TURN_TIMEOUT_S)
};

// What spawn() and send() did.
struct started {
  std::string child_id;
  std::string title;        // the child's
  int turn = 1;
  std::string turn_id;      // handoffd's id of this turn's result
  std::string turn_title;
  bool behind = false;      // waits for the child's previous turn
  std::size_t queue_position = 0;  // 0: started (or behind); else its place in the queue
  bool daemon_reachable = true;
};

class children {
 public:
  explicit children(children_options options);
  ~children();
  children(const children&) = delete;
  children& operator=(const children&) = delete;

  // Throw std::invalid_argument with a message for the model (a bad cwd, no codex...).
  started spawn(const std::string& parent, const std::string& task, const std::string& title,
                const std::string& cwd, const std::string& model);
  started send(const std::string& parent, const std::string& id, const std::string& message);

  // The turn ids a wait for `ids` covers (a child's id: its turns not received, else its latest;
  // `ID.N` as it is), or with none every turn of the parent not received. Throws
  // std::invalid_argument naming an id the parent never had.
  std::vector<std::string> wait_ids(const std::string& parent, const std::vector<std::string>& ids);
  // The parent has these turns' results (or knows where they went): not waited for again.
  void mark_received(const std::string& parent, const std::vector<std::string>& turn_ids);
  // `subagent/started` for every unfinished turn, `subagent/completed` for every unreported one,
  // on `c` (before a wait). Failures are left for the reporter.
  void announce(const std::string& parent, client::connection& c);

  // A turn as a wait that handoffd cannot answer sees it (local_wait.hpp).
  struct held_turn {
    std::string id;
    std::string title;
    codex::phase phase = phase::queued;
    std::string status;      // done, error once finished
    std::string error;
    std::string final_text;  // "" once handoffd took it
    bool reported = false;   // handoffd took its result: only handoffd can give it now
  };
  // The turns `turn_ids` of `parent` (unknown ids skipped), once each has ended (finished or
  // cancelled), `until` passed, or `cancel` was raised, whichever comes first.
  std::vector<held_turn> await_ended(const std::string& parent, const std::vector<std::string>& turn_ids,
                                std::optional<std::chrono::steady_clock::time_point> until,
                                const client::cancel_signal& cancel);

  // The turn `id` names (a child's id: its latest). Throws std::invalid_argument for an unknown id.
  std::optional<turn_view> view(const std::string& parent, const std::string& id);
  // Kills the child's running turn, drops its queued ones; returns its turn ids (for
  // subagent/cancel) and what it was doing. Throws std::invalid_argument for an unknown id.
  struct cancelled {
    std::vector<std::string> turn_ids;
    std::string was;  // running, queued, waiting, finished, cancelled
  };
  cancelled cancel(const std::string& parent, const std::string& id);
  // subagent_list's text (views.hpp).
  std::string list(const std::string& parent);

  // Kills every running turn and reports it cancelled (Codex closed the server).
  void shutdown();

  // For tests: threads started for turns and not joined yet.
  std::size_t turn_threads_held() const { return threads_.held(); }

 private:
  using lock = std::unique_lock<std::mutex>;

  // With mutex_ held. known(): the child `id` (or `ID.N`) names, or std::invalid_argument;
  // load(): the parent's state file, read once; save(): written again.
  child& known(const std::string& parent, const std::string& id);
  void load(const std::string& parent);
  void save(const std::string& parent);
  std::vector<const child*> of(const std::string& parent) const;
  started enqueue(child& c, std::string prompt);
  void start_ready();
  // Without mutex_: the body of a turn's thread, then its end.
  void run(turn* t, const turn_files& files);
  // spawn's and send's last step: announce on a new connection; false when handoffd is absent.
  bool announce_now(const std::string& parent);
  std::vector<rpc::completed_params> due();
  void taken(const std::string& turn_id);

  children_options options_;
  std::mutex mutex_;
  std::condition_variable ended_;  // a turn finished or was cancelled
  std::map<std::string, std::unique_ptr<child>> children_;  // by child id
  std::set<std::string> loaded_;                              // parents whose state file was read
  scheduler scheduler_;
  bool stopping_ = false;  // the destructor runs: nothing more starts
  turn_threads threads_;
  reporter reporter_;      // last: its thread calls due() and taken(), which use the above
};

}  // namespace handoff::cli::codex
