// The hook core every hook harness calls (client/cli/harness/core/), in this process against a
// real handoffd on a temporary socket: the outcome of completing and waiting for one child, the
// siblings sharing one budget, a cancelled sibling not waited for, and, with no daemon to reach,
// the local head and tail within the reader's caps with the full text in a private copy.
// (The suite runs with HANDOFF_AUTOSTART=0: an absent daemon stays absent.)
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <regex>
#include <string>
#include <vector>

#include "cli/harness/core/bound_child.hpp"
#include "cli/harness/core/daemon_link.hpp"
#include "cli/harness/core/hook_settings.hpp"
#include "cli/harness/core/local_bound.hpp"
#include "engine/text/batch.hpp"
#include "support/daemon_process.hpp"
#include "support/scoped_env.hpp"
#include "support/temp_dir.hpp"
#include "support/text_files.hpp"

namespace fs = std::filesystem;
namespace core = handoff::cli::hook_core;
using handoff::test::daemon_process;
using handoff::test::long_answer;
using handoff::test::read_text;
using handoff::test::text_lines;
using handoff::test::temp_dir;

namespace {

core::hook_settings on(const fs::path& socket) {
  core::hook_settings settings;
  settings.socket = socket.string();
  return settings;
}

core::finished_child child(const std::string& id, const std::string& answer, const handoff::reader_profile& reader) {
  core::finished_child c;
  c.parent = "ses-core";
  c.child = id;
  c.title = "audit " + id;
  c.answer = answer;
  c.reader = &reader;
  return c;
}

std::size_t lines_of(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1; }

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("hook core: a 171,016-byte answer alone comes back as its section: head and verdict within the reader's caps, the artifact exact") {
  daemon_process daemon;
  const std::string answer = long_answer(3001, 57);
  REQUIRE(answer.size() == 171'016);
  const core::bound_outcome out = core::bound_child(child("c1", answer, handoff::opencode_reader), on(daemon.socket()));
  REQUIRE(out.what == core::bound_outcome::kind::section);
  CHECK(out.text == out.section.text);
  CHECK(out.section.truncated);
  CHECK(out.text.starts_with("finding 0001 "));
  CHECK(out.text.find("VERDICT: ship it") != std::string::npos);
  const handoff::surface_caps caps = handoff::framed_caps(handoff::surface_caps::wait(), handoff::opencode_reader);
  CHECK(out.text.size() <= caps.per_result_bytes);
  CHECK(out.text.find("read offset=") != std::string::npos);  // opencode's read, not Pi's or Claude Code's Read
  REQUIRE(out.section.artifact.has_value());
  CHECK(read_text(out.section.artifact->path) == answer);
}

TEST_CASE("hook core: four siblings share one budget - each waits for the others, each gets a share of one 48 KiB batch") {
  daemon_process daemon;
  const core::hook_settings settings = on(daemon.socket());
  const std::vector<std::string> ids = {"a", "b", "c", "d"};
  std::vector<std::future<core::bound_outcome>> running;
  for (const std::string& id : ids) {
    core::finished_child c = child(id, long_answer(1001, 41, id + "-"), handoff::gemini_reader);
    for (const std::string& other : ids)
      if (other != id) c.siblings.push_back({other, "audit " + other});
    running.push_back(std::async(std::launch::async, [c, &settings] { return core::bound_child(c, settings); }));
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const core::bound_outcome out = running[i].get();
    REQUIRE(out.what == core::bound_outcome::kind::section);
    CHECK(out.text.find(ids[i] + "-VERDICT: ship it") != std::string::npos);
    CHECK(out.text.size() < 16 * 1024 - 1024);  // a share of the batch, not the lone cap
    total += out.text.size();
  }
  CHECK(total <= 48 * 1024);
}

TEST_CASE("hook core: a sibling cancelled by cancel_child is not waited for") {
  daemon_process daemon;
  core::hook_settings settings = on(daemon.socket());
  settings.siblings_wait = std::chrono::minutes(10);  // the wait ends on the cancel, far sooner
  core::cancel_child(settings, "ses-core", "failed-one", "it failed");
  core::finished_child c = child("survivor", long_answer(400, 57), handoff::claude_code_reader);
  c.siblings = {{"failed-one", "it failed"}};
  const auto started = std::chrono::steady_clock::now();
  const core::bound_outcome out = core::bound_child(c, settings);
  REQUIRE(out.what == core::bound_outcome::kind::section);
  CHECK(out.text.find("VERDICT: ship it") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::minutes(1));
}

TEST_CASE("hook core: no daemon to reach - unreachable with the reason, then a local head and tail within the caps, the full text in a 0600 copy in a 0700 dir") {
  temp_dir dir{"handoff-core-down"};
  const std::string answer = long_answer(3001, 57);
  const core::bound_outcome out = core::bound_child(child("c1", answer, handoff::opencode_reader), on(dir / "no.sock"));
  REQUIRE(out.what == core::bound_outcome::kind::unreachable);
  CHECK_FALSE(out.text.empty());
  const std::string why = core::why_not_bounded(out);
  CHECK(why.starts_with("handoff's daemon was not reached ("));

  const fs::path copy = core::write_private_copy(dir / "cache" / "unbounded", answer);
  CHECK(copy.parent_path() == dir / "cache" / "unbounded");
  CHECK(read_text(copy) == answer);
  CHECK(mode_of(copy) == 0600);
  CHECK(mode_of(copy.parent_path()) == 0700);

  for (const handoff::reader_profile* reader : {&handoff::opencode_reader, &handoff::claude_code_reader, &handoff::gemini_reader}) {
    CAPTURE(reader->name);
    const std::string text = core::local_head_tail(answer, *reader, copy, why);
    const handoff::surface_caps caps = handoff::framed_caps(handoff::surface_caps::wait(), *reader);
    CHECK(text.size() <= caps.per_result_bytes);
    CHECK(lines_of(text) <= caps.max_lines);
    CHECK(text.starts_with("finding 0001 "));
    CHECK(text.find("VERDICT: ship it") != std::string::npos);
    // The one line, last, naming the copy; the footer's calls name it too.
    const std::string last = text.substr(text.rfind('\n') + 1);
    CHECK(last == "[handoff: " + why + "; the head and tail above were cut by the hook itself, the full text (171,016 bytes) is in " +
                      copy.string() + "]");
    CHECK(text.find(copy.string()) < text.rfind('\n'));  // the footer names it (its calls, or the plan command)
    // Head, the omitted lines read from the copy, and tail make the answer again.
    std::smatch omitted;
    REQUIRE(std::regex_search(text, omitted, std::regex("omitted lines (\\d+)-(\\d+)")));
    const std::size_t first = std::stoul(omitted[1]), end = std::stoul(omitted[2]);
    const std::vector<std::string> all = text_lines(read_text(copy));
    const std::vector<std::string> shown = text_lines(text);
    for (std::size_t i = 0; i + 1 < first; ++i) CHECK(shown[i] == all[i]);
    CHECK(std::find(shown.begin(), shown.end(), all[end]) != shown.end());  // the first line of the tail
  }
}

TEST_CASE("hook core: a private copy is never written through a symlink at its directory") {
  temp_dir dir{"handoff-core-link"};
  fs::create_directory(dir / "elsewhere");
  fs::create_directory_symlink(dir / "elsewhere", dir / "unbounded");
  CHECK_THROWS(core::write_private_copy(dir / "unbounded", "text"));
  CHECK(fs::is_empty(dir / "elsewhere"));
  CHECK_THROWS(core::write_private_copy("relative/dir", "text"));
}

TEST_CASE("hook core: keep_unbounded_copy writes in the user's cache and takes out copies untouched for 30 days, nothing else") {
  temp_dir dir{"handoff-core-keep"};
  handoff::test::scoped_env env;
  env.set("XDG_CACHE_HOME", (dir / "cache").string());
  const fs::path unbounded = dir / "cache" / "handoff" / "unbounded";
  CHECK(core::unbounded_dir() == unbounded);
  const fs::path first = core::keep_unbounded_copy("first answer");
  REQUIRE(first.parent_path() == unbounded);
  // Aged: one copy, a file of another name and a copy-named symlink to a file outside.
  const std::string hex(64, 'a');
  handoff::test::write_text(unbounded / (hex + ".txt"), "old copy");
  handoff::test::write_text(unbounded / "notes.txt", "the user's");
  handoff::test::write_text(dir / "outside.txt", "outside");
  fs::create_symlink(dir / "outside.txt", unbounded / (std::string(64, 'b') + ".txt"));
  const auto aged = fs::file_time_type::clock::now() - std::chrono::hours(24 * 31);
  fs::last_write_time(unbounded / "notes.txt", aged);
  fs::last_write_time(unbounded / (hex + ".txt"), aged);
  fs::last_write_time(dir / "outside.txt", aged);

  const fs::path second = core::keep_unbounded_copy("second answer");
  CHECK(read_text(second) == "second answer");
  CHECK(read_text(first) == "first answer");  // recent: kept
  CHECK_FALSE(fs::exists(unbounded / (hex + ".txt")));  // 31 days untouched: taken out
  CHECK(read_text(unbounded / "notes.txt") == "the user's");
  CHECK(fs::is_symlink(unbounded / (std::string(64, 'b') + ".txt")));
  CHECK(read_text(dir / "outside.txt") == "outside");
}

TEST_CASE("hook core: the one line stays one short line, and usage needs both the tokens and the window") {
  CHECK(core::one_line("connect:\nrefused\t(2)") == "connect: refused (2)");
  const std::string long_why = std::string(150, 'x') + "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";  // é...
  const std::string cut = core::one_line(long_why);
  CHECK(cut.size() <= 160);
  CHECK(cut.ends_with("..."));
  CHECK((static_cast<unsigned char>(cut[cut.size() - 4]) & 0xC0) != 0xC0);  // no lead byte left without its tail

  CHECK_FALSE(core::usage_against(std::nullopt, 1000).has_value());
  CHECK_FALSE(core::usage_against(500, std::nullopt).has_value());
  const auto usage = core::usage_against(1500, 1000);
  REQUIRE(usage.has_value());
  CHECK(usage->tokens == 1000);
  CHECK(usage->context_window == 1000);
  CHECK(usage->percent == doctest::Approx(100.0));
  CHECK(core::grouped(171016) == "171,016");
  CHECK(core::grouped(999) == "999");
}

TEST_CASE("hook core: fits_alone is the reader's framed wait caps - a short answer fits, 171 KB does not, Claude Code's frame counts") {
  CHECK(core::fits_alone("All good.\nVERDICT: fine", handoff::claude_code_reader));
  CHECK_FALSE(core::fits_alone(long_answer(3001, 57), handoff::gemini_reader));
  // 500 lines of 32 bytes: 16,000 bytes fit Gemini's caps (no frame) but not Claude Code's,
  // which counts its frame and a two-space indent on each line.
  const std::string edge = long_answer(501, 32);
  CHECK(core::fits_alone(edge, handoff::gemini_reader));
  CHECK_FALSE(core::fits_alone(edge, handoff::claude_code_reader));
}
