// The subagents `handoff mcp` runs for Codex threads: each a real `codex exec` process on the same
// Codex home (so the same model providers and settings), whose exact final message goes to
// handoffd as the child's result, like every other harness's.
//
// Contract:
// - A child is a conversation of turns. spawn() runs its task as turn 1 under the child's id
//   (`cx-1a2b3c`); send() continues the same Codex thread (`codex exec resume`) as turn n, id
//   `cx-1a2b3c.n`, title "TITLE (turn n)". A turn waits behind its child's previous one, and
//   behind others while max_running turns run; queued turns start in order.
// - Each new turn is announced (`subagent/started`) at once when handoffd answers; announce()
//   repeats that for every turn not finished (a restarted handoffd has forgotten them), and every
//   finished turn's `subagent/completed` is retried until handoffd takes it: a result is not lost
//   to handoffd's restart. A turn's final text is dropped once handoffd took it.
// - A turn ends done (exit 0 and a final message), or error: its process failed (the message
//   names the exit and the tail of its stderr), ran past the turn timeout, or could not start.
// - cancel() kills a child's process group and tells handoffd; shutdown() does that for every
//   child still running (Codex closed the server), and each child dies with the server anyway
//   (PR_SET_PDEATHSIG).
// - What the parent has received is tracked per turn, and the children of each parent thread
//   are kept in the state directory (0700, a file 0600 per thread), so a server started later
//   for the same thread (Codex resumed after a crash) still knows them: a wait without ids then
//   still finds their results in handoffd's queue. A turn that was running when its server died
//   is reported as an error saying so.
// Thread-safe: every public member locks.
#pragma once

#include <sys/types.h>

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
#include <thread>
#include <vector>

#include "cli/daemon_command.hpp"

namespace handoff::cli::codex {

struct codex_children_options {
  daemon_options daemon;               // handoffd's socket (empty: the default)
  std::filesystem::path codex;         // the codex binary (codex_env.hpp)
  std::filesystem::path state_dir;     // per-thread state and the turns' files
  std::size_t max_running = 4;         // turns running at once ($HANDOFF_CODEX_MAX_RUNNING, 1..32)
  std::chrono::seconds turn_timeout{3600};  // one turn at most ($HANDOFF_CODEX_TURN_TIMEOUT_S)
};

// What spawn() and send() did.
struct codex_started {
  std::string child_id;
  std::string title;        // the child's
  int turn = 1;
  std::string turn_id;      // handoffd's id of this turn's result
  std::string turn_title;
  bool behind = false;      // waits for the child's previous turn
  std::size_t queue_position = 0;  // 0: started (or behind); else its place in the queue
  bool daemon_reachable = true;
};

// A turn as the tools show it.
struct codex_turn_view {
  std::string id;
  std::string title;
  std::string phase;        // waiting, queued, running, finished, cancelled
  std::string status;       // done / error once finished
  std::string preview;      // latest activity, at most 2 KiB
};

class codex_children {
 public:
  explicit codex_children(codex_children_options options);
  ~codex_children();
  codex_children(const codex_children&) = delete;
  codex_children& operator=(const codex_children&) = delete;

  // Throws std::invalid_argument with a message for the model (a bad cwd, no codex...).
  codex_started spawn(const std::string& parent, const std::string& task, const std::string& title,
                      const std::string& cwd, const std::string& model);
  codex_started send(const std::string& parent, const std::string& id, const std::string& message);

  // The turn ids a wait for `ids` covers (a child's id: its turns not received, else its latest;
  // `ID.N` as it is), or with none every turn of the parent not received. Throws
  // std::invalid_argument naming an id the parent never had.
  std::vector<std::string> wait_ids(const std::string& parent, const std::vector<std::string>& ids);
  // The parent has these turns' results (or knows where they went): not waited for again.
  void mark_received(const std::string& parent, const std::vector<std::string>& turn_ids);
  // `subagent/started` for every unfinished turn, `subagent/completed` for every unreported one,
  // on `c` (before a wait). Failures are left for the retry loop.
  void announce(const std::string& parent, client::connection& c);

  // The turn `id` names (a child's id: its latest).
  std::optional<codex_turn_view> view(const std::string& parent, const std::string& id);
  // Kills the child's running turn, drops its queued ones; returns its turn ids (for
  // subagent/cancel) and what it was doing. Throws std::invalid_argument for an unknown id.
  struct cancelled {
    std::vector<std::string> turn_ids;
    std::string was;  // running, queued, finished, cancelled
  };
  cancelled cancel(const std::string& parent, const std::string& id);
  // One line per child, at most 2 KiB.
  std::string list(const std::string& parent);

  // Kills every running turn and reports it cancelled (Codex closed the server).
  void shutdown();

 private:
  struct turn;
  struct child;
  using lock = std::unique_lock<std::mutex>;

  // These three with mutex_ held. known(): the child `id` (or `ID.N`) names, or
  // std::invalid_argument; load(): the parent's state file, read once; save(): written again.
  child& known(const std::string& parent, const std::string& id);
  void load(const std::string& parent);
  void save(const std::string& parent);
  codex_started enqueue(lock&, child& c, std::string prompt);
  void start_ready(lock&);
  void start(lock&, turn& t);
  void watch(turn* t, std::filesystem::path last, std::filesystem::path err);
  void finish(turn* t, int wait_status, const std::filesystem::path& last, const std::filesystem::path& err,
              bool timed_out);
  void report_loop();
  // completion_of() and reported() with mutex_ held; report() without.
  static rpc::completed_params completion_of(const turn& t);
  static bool report(const rpc::completed_params& done, client::connection& c);
  void reported(turn& t);
  std::optional<client::connection> connect() const;

  codex_children_options options_;
  std::mutex mutex_;
  std::condition_variable wake_;  // the report loop: something to report, or stopping
  std::map<std::string, std::unique_ptr<child>> children_;  // by child id
  std::set<std::string> loaded_;                              // parents whose state file was read
  std::vector<turn*> queue_;                                  // turns waiting for a running slot
  std::size_t running_ = 0;
  std::vector<std::thread> watchers_;
  bool stopping_ = false;
  std::thread reporter_;
};

}  // namespace handoff::cli::codex
