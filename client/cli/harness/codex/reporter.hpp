// Handing finished turns' results to handoffd until it has taken each, so that a result is not
// lost to handoffd's restart or absence.
//
// Contract: a thread of its own asks `due` for the completions not taken yet, when woken (a
// turn finished, a state file was read) and every 2 s, sends them on one connection, and calls
// `taken` with each turn id handoffd took (or answered with a conflict: it holds another text
// for it, and nothing better can be sent). A completion may be sent twice (announce() races
// this loop); handoffd takes a resend as the same. `due` and `taken` are called without this
// class's lock held; the caller must not hold its own lock when it destroys this.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/daemon_command.hpp"
#include "cli/harness/codex/turn.hpp"

namespace handoff::cli::codex {

// How long a report to handoffd (started, completed, cancel) waits for its reply.
inline constexpr std::chrono::milliseconds report_call_timeout{10'000};

// A connection to handoffd (started when none runs, unless HANDOFF_AUTOSTART=0), or nullopt when
// none can be had, with the reason in `why` when given. `call_timeout`: how long one call waits
// for its reply (report_call_timeout), else the client's default (a wait has its own).
std::optional<client::connection> connect_to_handoffd(const daemon_options& daemon,
                                                      std::optional<std::chrono::milliseconds> call_timeout,
                                                      std::string* why = nullptr);

// A finished turn's `subagent/completed`.
rpc::completed_params completion_of(const turn& t);

// Sends one completion; true when handoffd has it (or holds another text for that child).
bool send_completion(const rpc::completed_params& done, client::connection& c);

class reporter {
 public:
  using due_fn = std::function<std::vector<rpc::completed_params>()>;
  using taken_fn = std::function<void(const std::string& turn_id)>;

  reporter(daemon_options daemon, due_fn due, taken_fn taken);
  ~reporter();  // stop()
  reporter(const reporter&) = delete;
  reporter& operator=(const reporter&) = delete;

  // Something may be due: look now rather than at the next tick.
  void wake();
  // Ends the thread (a send under way finishes first).
  void stop();

 private:
  void loop();
  bool stopping();

  daemon_options daemon_;
  due_fn due_;
  taken_fn taken_;
  std::mutex mutex_;
  std::condition_variable woken_;
  bool pending_ = false;  // wake() since the last look
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace handoff::cli::codex
