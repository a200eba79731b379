// A subagent of `handoff mcp` (a child) and its turns, as children.hpp's parts share them: the
// scheduler moves turns between phases, a supervisor runs one, the reporter hands its result to
// handoffd, the views show them and the state file keeps them. The children class owns them all
// and its one mutex guards every field here.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::cli::codex {

// Where a turn is. waiting: behind its child's previous turn; queued: for a running slot;
// running: its `codex exec` lives; finished: it ended (status done or error); cancelled: by the
// parent or by the server's end, with nothing to report.
enum class phase { waiting, queued, running, finished, cancelled };

// The phase as the tools and the state file spell it ("waiting", ...).
std::string_view phase_name(phase p) noexcept;
// The phase `name` spells, nullopt for any other text.
std::optional<phase> phase_named(std::string_view name) noexcept;

struct child;

struct turn {
  std::string id;         // the child's id for turn 1, `ID.N` for turn N
  int n = 1;              // 1.. within its child
  std::string title;      // the child's, with " (turn N)" from turn 2
  std::string prompt;     // "" once started
  child* owner = nullptr;
  codex::phase phase = phase::queued;
  pid_t pid = -1;         // its process group while running, else -1
  bool reported = false;  // handoffd has its completion (or nothing is left to report)
  bool received = false;  // the parent has its result (or knows where it went)
  std::string status;     // done, error once finished
  std::string error;      // why, when status is error (at most 8,000 bytes)
  std::string final_text; // its answer, until reported
  std::string preview;    // latest activity, at most 2 KiB
};

struct child {
  std::string id;      // `cx-` and 6 hex digits
  std::string parent;  // the Codex thread that spawned it
  std::string title;
  std::string cwd;     // absolute
  std::string model;   // "" for Codex's default
  std::string thread;  // Codex's thread id of the child's conversation (from its first turn)
  std::vector<std::unique_ptr<turn>> turns;

  // True while one of its turns is waiting, queued or running.
  bool busy() const;
};

}  // namespace handoff::cli::codex
