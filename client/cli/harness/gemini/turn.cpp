#include "cli/harness/gemini/turn.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "engine/fs/atomic_file.hpp"
#include "engine/fs/posix_io.hpp"
#include "engine/fs/sha256.hpp"

namespace handoff::cli::gemini {

namespace fs = std::filesystem;

gemini_turn read_gemini_turn(const fs::path& path) {
  gemini_turn turn;
  try {
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return turn;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return turn;
    const auto size = static_cast<std::size_t>(st.st_size);
    const std::size_t from = size > gemini_transcript_tail_bytes ? size - gemini_transcript_tail_bytes : 0;
    if (::lseek(fd.get(), static_cast<off_t>(from), SEEK_SET) < 0) return turn;
    const std::string text = read_all(fd.get(), gemini_transcript_tail_bytes, "the transcript");
    // From the last line back to the first whole one: the latest gemini record wins.
    std::size_t end = text.size();
    while (end > 0) {
      const std::size_t newline = text.rfind('\n', end - 1);
      const std::size_t start = newline == std::string::npos ? 0 : newline + 1;
      if (newline == std::string::npos && from > 0) break;  // a line cut by the tail's start
      const std::string_view line(text.data() + start, end - start);
      if (line.find("\"gemini\"") != std::string_view::npos) {
        const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
        if (record.is_object() && record.value("type", "") == "gemini" && record.contains("id") &&
            record["id"].is_string()) {
          turn.id = record["id"].get<std::string>();
          if (record.contains("tokens") && record["tokens"].is_object()) {
            const nlohmann::json& tokens = record["tokens"];
            if (tokens.contains("total") && tokens["total"].is_number_integer())
              turn.tokens = tokens["total"].get<std::int64_t>();
          }
          return turn;
        }
      }
      if (newline == std::string::npos) break;
      end = newline;
    }
  } catch (const std::exception&) {
    // What cannot be read is left out: no turn, static caps.
  }
  return turn;
}

fs::path gemini_project_temp(const fs::path& transcript) { return transcript.parent_path().parent_path(); }

std::string gemini_child_id(const std::string& turn_id, const nlohmann::json& tool_input) {
  // nlohmann::json keeps an object's keys sorted: the same arguments dump the same.
  return "gemini-" + sha256_hex(turn_id + "\n" + tool_input.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace))
                         .substr(0, 32);
}

void make_private_dir(const fs::path& dir) {
  fs::path at;
  for (const fs::path& part : dir) {
    at /= part;
    if (::mkdir(at.c_str(), 0700) == 0) continue;
    if (errno != EEXIST) throw std::runtime_error("cannot make " + at.string() + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::runtime_error(dir.string() + " is not a directory");
}

void write_private_file(const fs::path& path, const std::string& bytes) {
  unique_fd dir(::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) throw std::runtime_error("cannot open " + path.parent_path().string() + ": " + std::strerror(errno));
  write_file_atomically(dir.get(), path.filename().string(), bytes, publish_mode::replace, path.string(),
                        temp_method::automatic, when_synced::by_caller);
}

turn_marks::turn_marks(const fs::path& project_temp, const std::string& session, const std::string& turn_id)
    : dir_(project_temp / "handoff" / "turns" / sha256_hex(session + "\n" + turn_id).substr(0, 32)) {}

void turn_marks::add(const std::string& child_id) const {
  make_private_dir(dir_);
  write_private_file(dir_ / child_id, "");
}

std::vector<std::string> turn_marks::list() const {
  std::vector<std::string> names;
  unique_fd dir(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return names;
  for (std::string& name : list_names(dir.get()))
    if (name.starts_with("gemini-")) names.push_back(std::move(name));
  std::sort(names.begin(), names.end());
  return names;
}

void turn_marks::remove(const std::string& child_id) const noexcept {
  std::error_code ignored;
  fs::remove(dir_ / child_id, ignored);
  ::rmdir(dir_.c_str());  // fails while a sibling's mark is there, as it should
}

}  // namespace handoff::cli::gemini
