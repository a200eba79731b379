// `handoff read [--offset N] [--limit N] [--json] SHA256`
// `handoff read --bytes START-END FILE`
// `handoff read --plan FIRST-LAST [--skip N] FILE`
//
// With a SHA256: artifact/read, lines of an artifact (the saved full text of a cut result) from
// handoffd. Lines are numbered as Pi's `read` tool numbers them: split("\n"), 1-based. A page
// stops at 2000 lines or 50 KiB, as Pi's does. Prints the lines' text exactly (joined with "\n",
// no newline added); when lines remain, says on stderr where to continue. --json prints the
// result (path, text, firstLine, lastLine, totalLines, cut, nextOffset).
//
// With --bytes or --plan, FILE is read directly (no daemon): these are the commands a cut
// result's footer gives the parent to run through Pi's `bash` tool (projection_notice.hpp).
//   --bytes START-END prints bytes START (0-based, included) to END (excluded; past the end
//     means the end), each end first moved back to the start of the UTF-8 character it falls
//     in, so consecutive ranges A-B, B-C print the text between A and C exactly once and never
//     half a character. Nothing is added. The footer's ranges are at most 50 KiB and hold no
//     newline, so Pi's bash shows them uncut.
//   --plan FIRST-LAST prints the calls that read lines FIRST..LAST of FILE back, each uncut in
//     Pi 1.6.0 (text_page.hpp's read_plan), one a line, after a header line starting with "#".
//     At most max_plan_calls calls or max_plan_bytes bytes are printed, well within one
//     uncut page of Pi's bash (2000 lines, 50 KiB); then a "# more:" line gives the same
//     command with --skip N for the rest.
//   --outline FIRST-LAST prints the markdown headings of lines FIRST..LAST of FILE
//     (markdown_headings.hpp), one a line as a projection's outline shows them ("212 ## Title",
//     outline.hpp), after a header line starting with "#": the command the outline of a cut
//     result names for the headings it had no room for. Bounded like --plan, with --skip N.
//   --reader claude-code (with --plan or --outline): the calls are Claude Code 2.1.328's (`Read`
//     pages and `Bash` byte ranges, reader_profile.hpp), and an output holds at most 16 KiB,
//     within what its Bash shows uncut (30,000 characters).
#include "cli/read_command.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/fs/mapped_file.hpp"
#include "engine/fs/sha256.hpp"
#include "engine/text/markdown_headings.hpp"
#include "engine/text/outline.hpp"
#include "engine/text/projection_notice.hpp"
#include "engine/text/text_page.hpp"
#include "engine/text/text_shape.hpp"
#include "protocol/default_paths.hpp"
#include "utf8.hpp"

namespace handoff::cli {
namespace {

constexpr std::size_t max_plan_calls = 400;           // calls (headings) one --plan (--outline) output lists at most

struct read_options {
  rpc::artifact_read_params params;
  std::string artifact;  // a SHA-256, or with --bytes / --plan a file path
  std::string bytes;     // --bytes START-END
  std::string plan;      // --plan FIRST-LAST
  std::string outline;   // --outline FIRST-LAST
  std::size_t skip = 0;  // --skip N: calls of the plan (headings of the outline) not printed
  std::string reader = "pi";  // --reader: whose tools the plan's calls are for
  bool json = false;
};

// "A-B" as two whole numbers; nullopt when it is not that.
std::optional<std::pair<std::size_t, std::size_t>> parse_range(std::string_view s) {
  const std::size_t dash = s.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::pair<std::size_t, std::size_t> range;
  const auto number = [](std::string_view digits, std::size_t& out) {
    const char* const end = digits.data() + digits.size();
    const auto [stop, ec] = std::from_chars(digits.data(), end, out);
    return !digits.empty() && ec == std::errc() && stop == end;
  };
  if (!number(s.substr(0, dash), range.first) || !number(s.substr(dash + 1), range.second)) return std::nullopt;
  return range;
}

const CLI::Validator range_of_numbers(
    [](const std::string& s) -> std::string {
      const auto range = parse_range(s);
      if (!range) return "expected START-END, two whole numbers: " + s;
      if (range->first > range->second) return "the range " + s + " ends before it starts";
      return {};
    },
    "A-B");

// The whole file, mapped; nullopt after saying why.
std::optional<mapped_file> map_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    report("read", "cannot open " + path + ": " + std::strerror(errno));
    return std::nullopt;
  }
  try {
    mapped_file file(fd);
    ::close(fd);
    return file;
  } catch (const std::exception& e) {
    ::close(fd);
    report("read", "cannot read " + path + ": " + e.what());
    return std::nullopt;
  }
}

int run_bytes(const read_options& options) {
  const std::optional<mapped_file> file = map_file(options.artifact);
  if (!file) return exit_failure;
  const std::string_view text = file->view();
  const auto [start, end] = *parse_range(options.bytes);
  if (start > text.size()) {
    report("read", "--bytes starts at " + std::to_string(start) + ", past the end of " + options.artifact + " (" +
                       std::to_string(text.size()) + " bytes)");
    return exit_usage;
  }
  const std::size_t from = utf8_floor(text, start);
  const std::size_t to = utf8_floor(text, std::min(end, text.size()));
  return print("read", text.substr(from, to - from)) ? exit_ok : exit_failure;
}

// The profile --reader names, or nullptr after saying it names none.
const reader_profile* reader_profile_of(const read_options& options) {
  const reader_profile* profile = find_reader_profile(options.reader);
  if (profile == nullptr) report("read", "--reader " + options.reader + ": expected " + reader_list());
  return profile;
}

// This very executable, as the bash commands an output prints name it (the daemon's footers
// name an absolute CLI too).
std::string own_cli() {
  const std::filesystem::path self = rpc::own_executable();
  return self.empty() ? std::string("handoff") : self.string();
}

// The "# more:" line that ends a --plan or --outline output that stopped at its bound: the same
// command (`option` and its `range`) from item `skip` on.
void append_more_line(std::string& out, std::string_view option, const std::string& range, std::size_t skip,
                      const reader_profile& profile, const std::string& path) {
  out += "# more: ";
  append_shell_word(out, own_cli());
  out += " read";
  append_reader_option(out, profile);
  out += " ";
  out += option;
  out += " " + range + " --skip " + std::to_string(skip) + " ";
  append_shell_word(out, path);
  out.push_back('\n');
}

int run_plan(const read_options& options) {
  const std::optional<mapped_file> file = map_file(options.artifact);
  if (!file) return exit_failure;
  const std::string_view text = file->view();
  const auto [first, last] = *parse_range(options.plan);
  const std::string path = std::filesystem::absolute(options.artifact).lexically_normal().string();
  const reader_profile* profile = reader_profile_of(options);
  if (profile == nullptr) return exit_usage;
  std::optional<read_plan> plan;
  try {
    plan.emplace(text, first, last, *profile);
  } catch (const std::out_of_range& e) {
    report("read", "--plan " + options.plan + ": " + e.what());
    return exit_usage;
  }
  std::string out = "# The calls that read lines " + options.plan + " of " + path + " back, each shown whole by " +
                    std::string(profile->shown_by);
  if (options.skip > 0) out += ", from call " + std::to_string(options.skip + 1);
  out += ":\n";
  const std::string reader = own_cli();
  std::string calls;
  std::size_t listed = 0;
  std::size_t index = 0;
  while (const std::optional<read_step> step = plan->next()) {
    if (index++ < options.skip) continue;
    if (listed == max_plan_calls || calls.size() >= profile->plan_bytes) {
      append_more_line(calls, "--plan", options.plan, options.skip + listed, *profile, path);
      break;
    }
    append_read_call(calls, *step, path, reader, *profile);
    calls.push_back('\n');
    ++listed;
  }
  if (index <= options.skip) {
    report("read", "--skip " + std::to_string(options.skip) + " passes all " + std::to_string(index) +
                       " calls of lines " + options.plan);
    return exit_usage;
  }
  return print("read", out + calls) ? exit_ok : exit_failure;
}

int run_outline(const read_options& options) {
  const reader_profile* profile = reader_profile_of(options);
  if (profile == nullptr) return exit_usage;
  const std::optional<mapped_file> file = map_file(options.artifact);
  if (!file) return exit_failure;
  const std::string_view text = file->view();
  const auto [first, last] = *parse_range(options.outline);
  const std::size_t lines = measure(text).lines;
  if (first == 0 || last > lines) {
    report("read", "--outline " + options.outline + ": " + options.artifact + " has lines 1-" + std::to_string(lines));
    return exit_usage;
  }
  const std::vector<heading> headings = find_headings(text, first, last);
  if (options.skip > 0 && options.skip >= headings.size()) {
    report("read", "--skip " + std::to_string(options.skip) + " passes all " + std::to_string(headings.size()) +
                       " headings of lines " + options.outline);
    return exit_usage;
  }
  const std::string path = std::filesystem::absolute(options.artifact).lexically_normal().string();
  std::string out = "# The markdown headings of lines " + options.outline + " of " + path + ", each at its line (" +
                    std::string(profile->line_jump) + " shows it)";
  if (options.skip > 0) out += ", from heading " + std::to_string(options.skip + 1);
  out += headings.empty() ? ": none.\n" : ":\n";
  std::size_t listed = 0;
  std::string entries;
  for (std::size_t i = options.skip; i < headings.size(); ++i) {
    if (listed == max_plan_calls || entries.size() >= profile->plan_bytes) {
      append_more_line(entries, "--outline", options.outline, i, *profile, path);
      break;
    }
    append_outline_entry(entries, headings[i], text);
    entries.push_back('\n');
    ++listed;
  }
  return print("read", out + entries) ? exit_ok : exit_failure;
}

int run_read(const daemon_options& daemon, const read_options& options) {
  const bool local = !options.bytes.empty() || !options.plan.empty() || !options.outline.empty();
  if (local && options.json) {
    report("read", "--json goes with a SHA256 (artifact/read), not with --bytes, --plan or --outline");
    return exit_usage;
  }
  if (options.plan.empty() && options.outline.empty() && (options.skip > 0 || options.reader != "pi")) {
    report("read", "--skip and --reader go with --plan or --outline");
    return exit_usage;
  }
  if (!options.bytes.empty()) return run_bytes(options);
  if (!options.plan.empty()) return run_plan(options);
  if (!options.outline.empty()) return run_outline(options);
  if (!is_sha256_hex(options.artifact)) {
    report("read", "expected 64 lowercase hex digits (an artifact's SHA-256), got " + options.artifact +
                       "; --bytes, --plan and --outline take a file path");
    return exit_usage;
  }
  rpc::artifact_read_params params = options.params;
  params.sha256 = options.artifact;
  return with_client("read", daemon, [&](client::connection& c, const rpc::initialize_result&) {
    const rpc::artifact_read_result result = c.read_artifact(params);
    if (options.json) return print_json("read", rpc::encode(result)) ? exit_ok : exit_failure;
    if (!print("read", result.text)) return exit_failure;
    if (result.next_offset)
      report("read", "lines " + std::to_string(result.first_line) + "-" + std::to_string(result.last_line) +
                         " of " + std::to_string(result.total_lines) + "; continue with --offset " +
                         std::to_string(*result.next_offset));
    return exit_ok;
  });
}

}  // namespace

command add_read_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto options = std::make_shared<read_options>();
  CLI::App* sub = add_daemon_subcommand(
      app, "read", "Print lines of a saved full text (an artifact) by its SHA-256, or byte ranges / a read plan of a file");
  constexpr auto max_size = std::numeric_limits<std::size_t>::max();
  sub->add_option("artifact", options->artifact,
                  "The artifact's SHA-256 (64 lowercase hex digits); with --bytes, --plan or --outline, a file path")
      ->required();
  CLI::Option* offset = sub->add_option("--offset", options->params.offset, "First line to print, 1-based")
                            ->check(CLI::Range(std::size_t{1}, max_size))
                            ->capture_default_str();
  CLI::Option* limit = sub->add_option("--limit", options->params.limit, "Most lines to print [to the end, within one page]")
                           ->check(CLI::Range(std::size_t{1}, max_size));
  CLI::Option* bytes = sub->add_option("--bytes", options->bytes,
                                       "Print bytes START-END (0-based, END excluded) of the file, each end moved "
                                       "back to a character boundary")
                           ->check(range_of_numbers);
  CLI::Option* plan = sub->add_option("--plan", options->plan,
                                      "Print the calls that read lines FIRST-LAST of the file back uncut in Pi")
                          ->check(range_of_numbers);
  CLI::Option* outline = sub->add_option("--outline", options->outline,
                                         "Print the markdown headings of lines FIRST-LAST of the file, each at its line")
                             ->check(range_of_numbers);
  sub->add_option("--skip", options->skip, "With --plan or --outline: calls or headings not printed (a previous output's)");
  sub->add_option("--reader", options->reader,
                  "With --plan or --outline: whose tools the calls are for: " + reader_list())
      ->capture_default_str();
  bytes->excludes(plan)->excludes(outline)->excludes(offset)->excludes(limit);
  plan->excludes(outline)->excludes(offset)->excludes(limit);
  outline->excludes(offset)->excludes(limit);
  sub->add_flag("--json", options->json, "Print artifact/read's result as JSON");
  return command{sub, [daemon, options] { return run_read(*daemon, *options); }};
}

}  // namespace handoff::cli
