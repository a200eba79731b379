// What `handoff hook gemini` reads of a Gemini CLI 0.61.0 session, and how the hooks of one turn
// find each other.
//
// The transcript (the hook input's `transcript_path`, JSONL) gets one record per message, again
// whenever a message changes; the model's turn that calls tools is a `type: "gemini"` record,
// written before its tools run with its `tokens {input, output, cached, thoughts, tool, total}`,
// and updated (same `id`) only once they all completed. So while its invoke_agent calls run,
// the latest gemini record names the turn, in the BeforeTool and the AfterTool hooks alike.
//
// Gemini CLI runs a turn's invoke_agent calls in parallel, each with its own hook processes, and
// tells a hook no call id: the BeforeTool hook leaves a mark named for the call (the turn and
// the call's arguments) in a directory of the turn, and each AfterTool hook takes the marks it
// finds as the siblings that share its budget.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace handoff::cli::gemini {

inline constexpr std::size_t gemini_transcript_tail_bytes = 8 << 20;  // read at most this much, bytes

struct gemini_turn {
  std::string id;                     // the latest gemini record's id; empty when none was found
  std::optional<std::int64_t> tokens; // its tokens.total: the parent's context use
};

// Reads the end of the transcript at `path` (not followed through a symlink). Never throws.
gemini_turn read_gemini_turn(const std::filesystem::path& path);

// Gemini CLI's project temp dir, where its read_file may read: dirname(dirname(transcript)).
std::filesystem::path gemini_project_temp(const std::filesystem::path& transcript);

// The child id of an invoke_agent call: the same for its BeforeTool and AfterTool hooks and for
// a hook run again, different for another call (another turn, other arguments).
std::string gemini_child_id(const std::string& turn_id, const nlohmann::json& tool_input);

// The marks of one turn's invoke_agent calls: files named by child id in a 0700 directory under
// the project temp dir. Each call throws fs_error or std::runtime_error.
class turn_marks {
 public:
  turn_marks(const std::filesystem::path& project_temp, const std::string& session, const std::string& turn_id);
  void add(const std::string& child_id) const;
  std::vector<std::string> list() const;  // sorted; none when the directory is not there
  void remove(const std::string& child_id) const noexcept;  // and the directory once empty

 private:
  std::filesystem::path dir_;
};

// Makes `dir` (and its parents) with mode 0700 where missing; refuses a symlink or a non-directory.
void make_private_dir(const std::filesystem::path& dir);
// Writes `bytes` as `path`, 0600, atomically replacing what was there.
void write_private_file(const std::filesystem::path& path, const std::string& bytes);

}  // namespace handoff::cli::gemini
