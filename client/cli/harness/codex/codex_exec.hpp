// Supervising one `codex exec` process, on the calling thread, from fork to reaping.
//
// Contract: run_codex_exec() starts `plan.argv` in `plan.cwd`, in a process group of its own,
// stdin from /dev/null, stdout read here line by line (each complete `--json` line up to 4 MiB
// goes to `on_line`; a longer one is skipped), stderr into `plan.stderr_file` (created 0600).
// The process gets SIGKILL when the calling thread ends (PR_SET_PDEATHSIG), so the caller keeps
// this thread until the call returns. Past `plan.timeout` the group gets SIGTERM, then SIGKILL
// 5 s later; once the process is reaped, whatever it left in its group gets SIGKILL. Returns its
// wait status, or, when it could not be started, the errno of the call that failed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/harness/codex/turn.hpp"

namespace handoff::cli::codex {

struct exec_plan {
  std::vector<std::string> argv;           // argv[0]: the codex binary's path
  std::filesystem::path cwd;               // the child's working directory
  std::filesystem::path stderr_file;       // its stderr, truncated first
  std::chrono::seconds timeout{3600};      // then it is stopped ($HANDOFF_CODEX_TURN_TIMEOUT_S)
};

struct exec_outcome {
  int start_errno = 0;     // not 0: the process could not be started, and why (errno)
  int wait_status = 0;     // waitpid's status once reaped (when start_errno is 0)
  bool timed_out = false;  // it ran past plan.timeout and was stopped
};

// The arguments of turn `t`: `codex exec [resume THREAD] --json --skip-git-repo-check -o LAST
// -c mcp_servers.handoff.enabled=false [-m MODEL] PROMPT`. Turn 1 picks the model; a later turn
// resumes the child's Codex thread (a new conversation if it never said which).
std::vector<std::string> exec_argv(const std::filesystem::path& codex, const turn& t, const std::filesystem::path& last);

// `on_start` gets the pid (= its process group) once forked; `on_line` each stdout line.
exec_outcome run_codex_exec(const exec_plan& plan, const std::function<void(pid_t)>& on_start,
                            const std::function<void(std::string_view)>& on_line);

}  // namespace handoff::cli::codex
