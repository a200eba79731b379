#include "cli/harness/codex/turn_outcome.hpp"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstring>
#include <optional>
#include <system_error>

#include "cli/harness/codex/child_text.hpp"
#include "cli/harness/codex/file_reads.hpp"
#include "protocol/wire_limits.hpp"

namespace handoff::cli::codex {
namespace {

constexpr std::size_t stderr_tail_bytes = 1500;  // of the process's stderr, in the error
constexpr std::size_t stderr_read_bytes = 64 << 10;  // read from its end: well over the tail kept
constexpr std::size_t max_error_bytes = 8000;    // under handoffd's 8 KiB cap on an error text

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "codex exec exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "codex exec was killed by signal " + std::to_string(WTERMSIG(status));
  return "codex exec ended oddly";
}

}  // namespace

turn_files prepare_turn_files(const std::filesystem::path& state_dir, const std::string& parent,
                              const std::string& turn_id) {
  const std::filesystem::path dir = state_dir / file_name(parent);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  ::chmod(dir.c_str(), 0700);
  turn_files files{dir / (turn_id + ".last"), dir / (turn_id + ".err")};
  std::filesystem::remove(files.last, ec);
  return files;
}

turn_result collect_result(const exec_outcome& outcome, const turn_files& files, std::chrono::seconds timeout) {
  const std::optional<std::string> answer = read_whole(files.last, rpc::wire_limits{}.max_final_text_bytes);
  const std::string err_text = read_tail(files.err, stderr_read_bytes);
  std::error_code ec;
  std::filesystem::remove(files.last, ec);
  std::filesystem::remove(files.err, ec);

  turn_result r;
  const bool started = outcome.start_errno == 0;
  const bool exited_0 = started && WIFEXITED(outcome.wait_status) && WEXITSTATUS(outcome.wait_status) == 0;
  r.status = exited_0 && answer && !outcome.timed_out ? "done" : "error";
  if (r.status == "error") {
    std::string why = !started ? "codex exec could not be started: " + std::string(std::strerror(outcome.start_errno))
                      : outcome.timed_out ? "the turn ran past " + std::to_string(timeout.count()) +
                                                " s (HANDOFF_CODEX_TURN_TIMEOUT_S) and was stopped"
                                          : describe_exit(outcome.wait_status);
    const std::string tail = tail_text(valid_text(err_text), stderr_tail_bytes);
    if (!tail.empty()) why += "; its stderr ends: " + tail;
    r.error = tail_text(why, max_error_bytes);
  }
  r.final_text = valid_text(answer.value_or(""));
  return r;
}

}  // namespace handoff::cli::codex
