// Where a turn's `codex exec` writes, and what it leaves once ended: its result as handoffd takes it.
//
// Contract: done when the process exited 0 and wrote its `-o` file (the final message, exactly);
// else error, naming why (could not be started and the errno text, ran past the turn timeout,
// the exit status or signal) and, when it wrote any, the last 1,500 bytes of its stderr; the
// error is at most 8,000 bytes. The final text is the `-o` file made valid UTF-8 (a turn that
// failed may still have one). Both files are removed.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "cli/harness/codex/codex_exec.hpp"

namespace handoff::cli::codex {

struct turn_result {
  std::string status;      // done, error
  std::string error;       // why, when error
  std::string final_text;  // the answer ("" when there is none)
};

// Where a turn's process writes: STATE_DIR/<parent as file_name>/<turn id>.last (its -o file)
// and .err (its stderr).
struct turn_files {
  std::filesystem::path last;
  std::filesystem::path err;
};
// The turn's files, their directory made (0700) and an answer left from before removed.
turn_files prepare_turn_files(const std::filesystem::path& state_dir, const std::string& parent,
                              const std::string& turn_id);

// `timeout`: the turn timeout it ran under.
turn_result collect_result(const exec_outcome& outcome, const turn_files& files, std::chrono::seconds timeout);

}  // namespace handoff::cli::codex
