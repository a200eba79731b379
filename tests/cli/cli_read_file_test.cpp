// `handoff read --bytes`, `--plan` and `--outline` on a real file with the real binary: the
// commands a cut result's footer and outline give the parent to run through Pi's bash tool.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_process.hpp"
#include "projection_checks.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using handoff::test::cli_process;
using handoff::test::cli_result;
using handoff::test::temp_dir;

namespace {

cli_result handoff_read(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"read"};
  all.insert(all.end(), args.begin(), args.end());
  return cli_process(all).finish();
}

fs::path write_file(const temp_dir& dir, const std::string& name, const std::string& bytes) {
  const fs::path path = dir.path() / name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace

TEST_CASE("--bytes prints a byte range, each end moved back to a character boundary") {
  temp_dir tmp("handoff-cli-read");
  const std::string text = "ab\xE4\xB8\xAD" "cd\n\xF0\x9F\x98\x80z";  // ab中cd\n😀z
  const fs::path file = write_file(tmp, "t.txt", text);
  CHECK(handoff_read({"--bytes", "0-2", file.string()}).out == "ab");
  // 3 and 4 are inside 中: both ends go back to its start.
  CHECK(handoff_read({"--bytes", "3-4", file.string()}).out.empty());
  CHECK(handoff_read({"--bytes", "1-4", file.string()}).out == "b");
  CHECK(handoff_read({"--bytes", "4-6", file.string()}).out == "\xE4\xB8\xAD" "c");
  // Consecutive ranges give the text once, whatever the cut points.
  std::string joined;
  for (std::size_t at = 0; at < text.size(); at += 3) {
    const cli_result r = handoff_read({"--bytes", std::to_string(at) + "-" + std::to_string(at + 3), file.string()});
    REQUIRE(r.status == 0);
    joined += r.out;
  }
  CHECK(joined == text);
  // Past the end means the end; a start past the end or a backwards range is an error.
  CHECK(handoff_read({"--bytes", "7-999", file.string()}).out == "\n\xF0\x9F\x98\x80z");
  CHECK(handoff_read({"--bytes", "9-999", file.string()}).out == "\xF0\x9F\x98\x80z");
  const cli_result past = handoff_read({"--bytes", "99-100", file.string()});
  CHECK(past.status == 2);
  CHECK(past.err.find("past the end") != std::string::npos);
  CHECK(handoff_read({"--bytes", "5-4", file.string()}).status == 2);
  CHECK(handoff_read({"--bytes", "x-4", file.string()}).status == 2);
  const cli_result missing = handoff_read({"--bytes", "0-4", (tmp.path() / "none.txt").string()});
  CHECK(missing.status == 1);
  CHECK(missing.err.find("cannot open") != std::string::npos);
}

TEST_CASE("--plan lists the calls of read_plan, and pages its own output") {
  temp_dir tmp("handoff-cli-read");
  std::string text;
  for (int i = 1; i <= 30000; ++i) text += "line " + std::to_string(i) + std::string(50, '.') + "\n";
  for (int i = 0; i < 6; ++i) text += std::string(120000, static_cast<char>('p' + i)) + "\n";  // 3 ranges each
  text += "last";
  // A path of about 3,600 bytes makes each byte-range call that long, so the listing needs
  // more than one output to stay within a page of Pi's bash.
  fs::path dir = tmp.path();
  for (int i = 0; i < 14; ++i) dir /= std::string(250, static_cast<char>('a' + i));
  fs::create_directories(dir);
  const fs::path file = dir / "plan's.txt";
  std::ofstream(file, std::ios::binary) << text;
  const std::string path = fs::absolute(file).string();
  // The bash calls name the CLI that printed them, by its own resolved path (/proc/self/exe).
  const std::string self = fs::canonical(HANDOFF_CLI_PATH).string();
  const std::string expected = handoff::test::plan_listing(text, 10, 30007, path, self);
  const std::string more_command = "# more: '" + self + "' read --plan 10-30007 --skip ";

  std::string listed;
  std::vector<std::string> args = {"--plan", "10-30007", file.string()};
  int outputs = 1;
  for (;; ++outputs) {
    REQUIRE(outputs < 10);
    const cli_result r = handoff_read(args);
    REQUIRE(r.status == 0);
    CHECK(handoff::test::pi_bash_shows_whole(r.out));  // Pi's bash shows each output whole
    REQUIRE(r.out.substr(0, 2) == "# ");
    const std::string calls = r.out.substr(r.out.find('\n') + 1);
    const std::size_t more = calls.find(more_command);
    listed += calls.substr(0, more);
    if (more == std::string::npos) break;
    const std::size_t skip_at = more + more_command.size();
    args = {"--plan", "10-30007", "--skip", calls.substr(skip_at, calls.find(' ', skip_at) - skip_at), file.string()};
  }
  CHECK(outputs > 1);
  CHECK((listed == expected));
  const std::vector<handoff::test::footer_call> calls = handoff::test::parse_calls(listed);
  CHECK(calls.size() > 30);
  CHECK(std::count_if(calls.begin(), calls.end(), [](const auto& c) { return c.bytes; }) == 18);
  // (Compared whole, not decomposed: the texts are megabytes.)
  CHECK((handoff::test::follow_calls(text, path, calls) == text.substr(text.find("line 10."))));

  CHECK(handoff_read({"--plan", "0-3", file.string()}).status == 2);
  CHECK(handoff_read({"--plan", "5-30009", file.string()}).status == 2);
  CHECK(handoff_read({"--plan", "1-2", "--skip", "9", file.string()}).status == 2);
  CHECK(handoff_read({"--plan", "1-2", "--json", file.string()}).status == 2);
  CHECK(handoff_read({"--plan", "1-2", "--offset", "3", file.string()}).status == 2);
  CHECK(handoff_read({file.string()}).status == 2);  // without --bytes or --plan: a SHA-256
}

TEST_CASE("--outline lists every heading of the lines a cut outline left out, at its line, and pages its output") {
  temp_dir tmp("handoff-cli-read");
  // 500 headings of levels 2 and 3 between body lines: far more than a 16 KiB outline holds.
  std::string text = "# Report\n";
  std::size_t line = 1;
  std::vector<std::size_t> heading_lines;
  for (int i = 0; i < 500; ++i) {
    text += (i % 5 == 0 ? "## Part " : "### Step ") + std::to_string(i) + "\n";
    heading_lines.push_back(++line);
    text += "the worker retried the upload and the pool grew by one\n\n";
    line += 2;
  }
  text += "END";
  const fs::path file = write_file(tmp, "r.md", text);
  const handoff::projection_limits limits{16384, 600, 0.75};
  const handoff::artifact_ref ref{true, file.string(), "", ""};
  const handoff::projection p = handoff::project(text, limits, ref);
  REQUIRE(p.outline_left_out > 0);
  // The command the outline's last line names, run for real.
  const std::string range = std::to_string(p.omitted_first) + "-" + std::to_string(p.omitted_first + p.omitted_count - 1);
  REQUIRE(p.text.find("read --outline " + range + " '" + file.string() + "'`]") != std::string::npos);
  std::vector<std::size_t> listed;
  std::vector<std::string> args = {"--outline", range, file.string()};
  for (int page = 0; page < 10; ++page) {
    const cli_result r = handoff_read(args);
    REQUIRE(r.status == 0);
    CHECK(r.out.rfind("# The markdown headings of lines " + range + " of " + file.string(), 0) == 0);
    CHECK(r.out.size() <= 50 * 1024);
    std::string next;
    std::istringstream lines(r.out);
    for (std::string l; std::getline(lines, l);) {
      if (l.rfind("# more: ", 0) == 0) next = l;
      if (l.empty() || l[0] == '#') continue;
      const std::size_t number = std::stoul(l);
      CHECK(l.substr(l.find(' ') + 1, 1) == "#");
      handoff::test::check_heading_at(handoff::test::split_lines(text), number, l.find(' ', l.find(' ') + 1) - l.find(' ') - 1,
                                      l.substr(l.find(' ', l.find(' ') + 1) + 1));
      listed.push_back(number);
    }
    if (next.empty()) break;
    const std::size_t skip_at = next.find("--skip ") + 7;
    args = {"--outline", range, "--skip", next.substr(skip_at, next.find(' ', skip_at) - skip_at), file.string()};
  }
  std::vector<std::size_t> expected;
  for (const std::size_t h : heading_lines) {
    if (h >= p.omitted_first && h < p.omitted_first + p.omitted_count) expected.push_back(h);
  }
  CHECK(listed == expected);
  CHECK(listed.size() == p.outline_listed + p.outline_left_out);
  // Bad ranges and options are refused.
  CHECK(handoff_read({"--outline", "0-3", file.string()}).status == 2);
  CHECK(handoff_read({"--outline", "1-999999", file.string()}).status == 2);
  CHECK(handoff_read({"--outline", "1-5", "--skip", "99", file.string()}).status == 2);
  CHECK(handoff_read({"--skip", "1", file.string()}).status == 2);
  CHECK(handoff_read({"--outline", "1-5", "--plan", "1-5", file.string()}).status == 2);
}
