// `handoff wait --parent P [--timeout-ms N] [--tokens N --context-window N] [--json] CHILD...`
//
// subagent/wait: waits until every listed child has completed (or --timeout-ms passed), then
// prints the projected batch exactly as the parent model would read it: the rendered text's
// bytes and nothing else. Results delivered here are consumed (not auto-delivered again).
// With the usage flags the batch budget shrinks to fit the parent's free context.
//
// Exit status 4 when the timeout passed with children still pending (listed on stderr; the
// results that were ready are printed all the same). --json prints the whole result: sections,
// text, deferred, budget, timedOut, pending.
//
// Ctrl-C (or SIGTERM, SIGHUP) asks handoffd to cancel the wait instead of dropping the
// connection: a wait still asleep takes nothing (the results stay queued), and a batch handoffd
// had already answered, and so consumed, is printed in full rather than lost with the process
// (so is one being printed when the signal comes). Either way a note on stderr says which, and
// then the process ends by that signal, as it would have at once, so that a shell script
// running it stops too (its status reads 128 + the signal's number: 130 for Ctrl-C). A second
// signal ends the process at once.
#include "cli/wait_command.hpp"

#include <CLI/CLI.hpp>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/text/reader_profile.hpp"
#include "handoff/cancel_signal.hpp"

namespace handoff::cli {
namespace {

struct wait_options {
  rpc::wait_params params;
  usage_flags usage;
  bool json = false;
};

// The wait's cancel flag while one runs; raised by the first SIGINT, SIGTERM or SIGHUP.
std::atomic<client::cancel_signal*> interrupt_target{nullptr};
volatile std::sig_atomic_t interrupted_by = 0;
static_assert(std::atomic<client::cancel_signal*>::is_always_lock_free);

extern "C" void on_interrupt(int signo) {
  interrupted_by = signo;
  if (client::cancel_signal* target = interrupt_target.load()) target->raise();
}

// Ends the process by `signo`, as its default action would have, once everything that had to be
// written is written.
[[noreturn]] void die_by(int signo) {
  std::fflush(nullptr);
  std::signal(signo, SIG_DFL);
  ::raise(signo);
  std::_Exit(128 + signo);  // a signal whose default action does not end the process
}

// Routes the signals to `cancel` for its lifetime; each handler is reset by its first delivery
// (SA_RESETHAND), so a second Ctrl-C kills as usual. SA_RESTART: a signal while the batch is
// being written lets the write finish (poll() is never restarted, so the wait still sees it).
// A signal the process was started with ignored (a background job of a shell, nohup) stays
// ignored.
class interrupts_cancel {
 public:
  explicit interrupts_cancel(client::cancel_signal& cancel) {
    interrupt_target = &cancel;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND | SA_RESTART;
    for (std::size_t i = 0; i < signals_.size(); ++i) {
      ::sigaction(signals_[i], nullptr, &previous_[i]);
      if (previous_[i].sa_handler != SIG_IGN) ::sigaction(signals_[i], &action, nullptr);
    }
  }
  ~interrupts_cancel() {
    for (std::size_t i = 0; i < signals_.size(); ++i) ::sigaction(signals_[i], &previous_[i], nullptr);
    interrupt_target = nullptr;
  }
  interrupts_cancel(const interrupts_cancel&) = delete;
  interrupts_cancel& operator=(const interrupts_cancel&) = delete;

 private:
  static constexpr std::array<int, 3> signals_{SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> previous_{};
};

std::string join(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : " ") + id;
  return out;
}

int run_wait(const daemon_options& daemon, wait_options& options) {
  options.params.usage = usage_from(options.usage);
  return with_client("wait", daemon, [&](client::connection& c, const rpc::initialize_result&) {
    client::cancel_signal cancel;
    const interrupts_cancel routed(cancel);  // until the batch is written: it was consumed
    rpc::wait_result result;
    try {
      result = c.wait(options.params, cancel);
    } catch (const client::client_error& e) {
      if (e.kind() != client::error_kind::rpc || e.code() != rpc::errc::request_cancelled) throw;
      report("wait", "interrupted: handoffd took nothing; the results stay queued for the next wait or delivery");
      die_by(interrupted_by);
    }
    const bool ok = options.json ? print_json("wait", rpc::encode(result)) : print("wait", result.batch.text);
    if (cancel.raised()) {
      report("wait", ok ? "interrupted, but handoffd had already answered: the batch above is complete"
                        : "interrupted, but handoffd had already answered, and the batch could not be written");
      die_by(interrupted_by);
    }
    if (!ok) return exit_failure;
    if (!options.json && !result.already_delivered.empty())
      report("wait", "already delivered earlier, not repeated: " + join(result.already_delivered));
    if (!options.json && !result.cancelled.empty()) report("wait", "cancelled: " + join(result.cancelled));
    if (!options.json && !result.forgotten.empty())
      report("wait", "delivered long ago and forgotten, not repeated: " + join(result.forgotten));
    if (result.timed_out && !result.pending.empty()) {
      report("wait", "timed out; still pending: " + join(result.pending));
      return exit_wait_timeout;
    }
    return exit_ok;
  });
}

}  // namespace

command add_wait_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto options = std::make_shared<wait_options>();
  CLI::App* sub =
      add_daemon_subcommand(app, "wait", "Wait for children; print their batch as the parent model reads it");
  sub->add_option("--parent", options->params.parent_id, "The parent agent's id")->required();
  sub->add_option("children", options->params.child_ids, "The children to wait for (1 to 64 ids)")
      ->required()
      ->expected(1, 64);
  sub->add_option("--timeout-ms", options->params.timeout_ms,
                  "Give up after this many milliseconds (exit 4 if children are still pending); "
                  "default: wait until all complete")
      ->check(CLI::Range(std::int64_t{0}, rpc::wire_limits{}.max_timeout_ms));
  add_usage_flags(*sub, options->usage);
  sub->add_option("--reader", options->params.reader,
                  "Whose tools the footers' calls are for: " + reader_list())
      ->check(CLI::IsMember(reader_names()))
      ->capture_default_str();
  sub->add_flag("--json", options->json, "Print subagent/wait's whole result as JSON");
  sub->footer("Exit status: 0 all listed children delivered, 4 timed out with children pending; "
              "see `handoff --help` for the others.");
  return command{sub, [daemon, options] { return run_wait(*daemon, *options); }};
}

}  // namespace handoff::cli
