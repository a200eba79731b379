// `handoff project [FILE|-] [--max-bytes N] [--max-lines N] [--head-share F]
//                  [--no-outline] [--artifact-dir DIR] [--json]`
//
// Reads FILE, or standard input for "-" (bytes as they are: nothing is decoded or
// normalised), and prints its projection (docs/design.md §3) exactly as the parent
// agent would read it: the bytes of the projection and nothing else, so no newline is added
// after a projection's footer (a terminal prompt may follow it on the same line).
//
// When the text does not fit, its full text is first saved in the artifact store so the
// footer can name it; when the store cannot be opened or written, the projection is printed
// all the same, its footer saying the full text was NOT saved and why.
//
// --json prints one JSON document instead (and a final newline):
//   {text, truncated, totalBytes, totalLines, headLines, tailLines,
//    omitted: {offset, limit} | null, outline: {listed, leftOut},
//    artifact: {saved, path, sha256, reason} | null}
// where `omitted` is the omitted lines (first line, count; the footer names the calls that
// read them back), `outline` how many of their headings the outline lists and leaves out
// (--no-outline: none), and `artifact` is null when nothing was cut.
// Input that is not valid UTF-8 is printed there with U+FFFD in place of the bad bytes.
//
// Exit status: 0 printed; 1 the input could not be read or the output written; 2 bad
// options, or limits too small for the marker and footer with this artifact's path.
#include "cli/project_command.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/store/artifact_store.hpp"
#include "engine/text/projection.hpp"
#include "engine/fs/sha256.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli {
namespace {

struct project_options {
  std::string input = "-";
  projection_limits limits;  // 16384 bytes, 600 lines, 0.75 (projection.hpp)
  std::string artifact_dir;  // empty: rpc::default_artifact_dir()
  bool json = false;
};

void complain(const std::string& what) {
  std::fprintf(stderr, "handoff project: %s\n", what.c_str());
}

// All bytes of `path` ("-": standard input), or nullopt after saying why.
std::optional<std::string> read_all(const std::string& path) {
  const bool from_stdin = path == "-";
  std::FILE* file = from_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    complain("cannot open " + path + ": " + std::strerror(errno));
    return std::nullopt;
  }
  std::string text;
  constexpr std::size_t chunk_bytes = 64 * 1024;  // bytes asked of each fread
  std::size_t got = 0;
  do {
    const std::size_t used = text.size();
    text.resize(used + chunk_bytes);
    got = std::fread(text.data() + used, 1, chunk_bytes, file);
    text.resize(used + got);
  } while (got == chunk_bytes);
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  if (!from_stdin) std::fclose(file);
  if (failed) {
    complain("cannot read " + (from_stdin ? std::string("standard input") : path) + ": " +
             std::strerror(error));
    return std::nullopt;
  }
  return text;
}

// Saves the full text; any failure, opening the store included, comes back as saved=false
// with the reason, which the footer then prints.
artifact_ref save_full_text(std::string_view text, const std::string& dir_option) {
  const std::filesystem::path dir =
      dir_option.empty() ? rpc::default_artifact_dir() : std::filesystem::path(dir_option);
  if (dir.empty()) {
    return artifact_ref{false, {}, sha256_hex(text), "HOME is not set and no --artifact-dir given"};
  }
  try {
    artifact_store store(std::filesystem::absolute(dir));
    return store.save(text);
  } catch (const std::exception& e) {
    return artifact_ref{false, {}, sha256_hex(text), e.what()};
  }
}

nlohmann::json to_json(const projection& p, const std::optional<artifact_ref>& artifact) {
  nlohmann::json out = {
      {"text", p.text},
      {"truncated", p.truncated},
      {"totalBytes", p.total.bytes},
      {"totalLines", p.total.lines},
      {"headLines", p.head_lines},
      {"tailLines", p.tail_lines},
      {"omitted", nullptr},
      {"outline", {{"listed", p.outline_listed}, {"leftOut", p.outline_left_out}}},
      {"artifact", nullptr},
  };
  if (p.truncated) out["omitted"] = {{"offset", p.omitted_first}, {"limit", p.omitted_count}};
  if (artifact) {
    out["artifact"] = {
        {"saved", artifact->saved},
        {"path", artifact->saved ? nlohmann::json(artifact->path) : nlohmann::json(nullptr)},
        {"sha256", artifact->sha256},
        {"reason", artifact->saved ? nlohmann::json(nullptr) : nlohmann::json(artifact->error)},
    };
  }
  return out;
}

// A whole number >= min. (CLI11's Range on an unsigned option lets "-1" wrap around.)
CLI::Validator at_least(std::size_t min) {
  return CLI::Validator(
      [min](std::string& value) -> std::string {
        std::size_t n = 0;
        const char* const end = value.data() + value.size();
        const auto [stop, ec] = std::from_chars(value.data(), end, n);
        if (ec != std::errc() || stop != end) return "not a whole number: " + value;
        if (n < min) return "must be at least " + std::to_string(min) + ", got " + value;
        return {};
      },
      ">= " + std::to_string(min));
}

bool write_all(std::string_view bytes) {
  const std::size_t written = std::fwrite(bytes.data(), 1, bytes.size(), stdout);
  if (written != bytes.size() || std::fflush(stdout) != 0) {
    complain(std::string("cannot write the output: ") + std::strerror(errno));
    return false;
  }
  return true;
}

int run_project(const project_options& options) {
  const std::optional<std::string> text = read_all(options.input);
  if (!text) return exit_failure;

  // Only a text that is cut has an artifact (docs/design.md §3: a fitting result creates none).
  std::optional<artifact_ref> artifact;
  if (!fits(*text, options.limits)) {
    artifact = save_full_text(*text, options.artifact_dir);
    // The footer's bash commands name this very executable, so they work off the PATH too.
    if (const auto self = rpc::own_executable(); !self.empty()) artifact->reader = self.string();
  }
  projection result;
  try {
    result = project(*text, options.limits, artifact.value_or(artifact_ref{}));
  } catch (const std::invalid_argument& e) {
    complain(e.what());
    return exit_usage;
  }
  if (!options.json) return write_all(result.text) ? exit_ok : exit_failure;
  const std::string json =
      to_json(result, artifact).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  return write_all(json + "\n") ? exit_ok : exit_failure;
}

}  // namespace

command add_project_command(CLI::App& app) {
  auto options = std::make_shared<project_options>();
  CLI::App* sub = app.add_subcommand(
      "project", "Print the head + tail projection of a text, as a parent agent would read it");
  sub->add_option("file", options->input, "Text to project; - reads standard input")
      ->capture_default_str();
  sub->add_option("--max-bytes", options->limits.max_bytes,
                  "Bound on the whole projection, in UTF-8 bytes")
      ->check(at_least(min_projection_bytes))
      ->capture_default_str();
  sub->add_option("--max-lines", options->limits.max_lines, "Bound on the projection's lines")
      ->check(at_least(min_projection_lines))
      ->capture_default_str();
  sub->add_option("--head-share", options->limits.head_share,
                  "Share of the kept text given to the head (logs read better at 0.4)")
      ->check(CLI::Range(0.05, 0.95))
      ->capture_default_str();
  sub->add_flag("!--no-outline", options->limits.outline,
                "No outline of the omitted lines' headings: head, marker, tail and footer only");
  sub->add_option("--artifact-dir", options->artifact_dir,
                  "Where the full text of a cut result is saved "
                  "[${XDG_CACHE_HOME:-~/.cache}/handoff/results]");
  sub->add_flag("--json", options->json, "Print the projection and its metadata as JSON");
  return command{sub, [options] { return run_project(*options); }};
}

}  // namespace handoff::cli
