// `handoff project` end to end (client/cli/project_command.cpp): the real binary on real
// files in a temporary directory, its output bytes, exit status, and the artifact it leaves.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "projection_checks.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using handoff::test::temp_dir;

namespace {

struct run_result {
  int status = -1;  // exit status
  std::string out;  // standard output, bytes as written
};

std::string quote(const std::string& arg) {
  std::string q = "'";
  for (const char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// Runs a shell command line and captures its standard output.
run_result run_shell(const std::string& command) {
  run_result result;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[65536];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, got);
  const int status = ::pclose(pipe);
  REQUIRE(WIFEXITED(status));
  result.status = WEXITSTATUS(status);
  return result;
}

// `handoff project ARGS...`, standard input from `stdin_path` when given, standard error
// dropped (the exit status is what is checked).
run_result handoff_project(const std::vector<std::string>& args,
                           const std::string& stdin_path = "") {
  std::string command = quote(HANDOFF_CLI_PATH) + " project";
  for (const std::string& arg : args) command += " " + quote(arg);
  if (!stdin_path.empty()) command += " < " + quote(stdin_path);
  return run_shell(command + " 2>/dev/null");
}

std::string sha256sum(const fs::path& path) {
  const run_result r = run_shell("sha256sum " + quote(path.string()));
  REQUIRE(r.status == 0);
  return r.out.substr(0, 64);
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  return files;
}

std::string numbered_report(int lines) {
  std::string text = "BEGIN\n";
  for (int i = 1; i <= lines; ++i)
    text += "line " + std::to_string(i) + " of the long report, with some evidence\n";
  return text + "END";
}

}  // namespace

TEST_CASE("a text that fits is printed byte for byte and saves nothing") {
  temp_dir tmp("handoff-cli");
  const std::string text = std::string("short\r\nreport\0with a NUL\n", 25) + "\xE4\xB8\xAD";
  write_file(tmp / "in.txt", text);
  const fs::path store = tmp / "store";
  const run_result r =
      handoff_project({(tmp / "in.txt").string(), "--artifact-dir", store.string()});
  CHECK(r.status == 0);
  CHECK(r.out == text);
  CHECK(files_in(store).empty());

  const run_result piped =
      handoff_project({"-", "--artifact-dir", store.string()}, (tmp / "in.txt").string());
  CHECK(piped.status == 0);
  CHECK(piped.out == text);
}

TEST_CASE("a long text is projected and saved under its SHA-256, byte for byte, mode 0600") {
  temp_dir tmp("handoff-cli");
  const std::string text = numbered_report(2000);
  const fs::path input = tmp / "report.md";
  write_file(input, text);
  const fs::path store = tmp / "cache" / "store";
  const run_result r = handoff_project({input.string(), "--artifact-dir", store.string()});
  REQUIRE(r.status == 0);

  const std::string sha = sha256sum(input);
  const fs::path artifact = store / (sha + ".txt");
  REQUIRE(files_in(store) == std::vector<fs::path>{artifact});
  CHECK(slurp(artifact) == text);
  CHECK(sha256sum(artifact) == sha);
  struct stat st {};
  REQUIRE(::stat(artifact.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  CHECK(r.out.size() <= 16384);
  CHECK(r.out.substr(0, 6) == "BEGIN\n");
  CHECK(r.out.find("\nEND\n[Truncated: ") != std::string::npos);
  CHECK(r.out.find("Full text: " + artifact.string() + " ") != std::string::npos);
  // The CLI prints exactly the engine's projection for this artifact.
  handoff::artifact_ref ref{true, artifact.string(), sha, ""};
  ref.reader = fs::canonical(HANDOFF_CLI_PATH).string();  // the CLI names itself in bash calls
  const handoff::projection p = handoff::project(text, {16384, 600, 0.75}, ref);
  CHECK(p.text == r.out);
  handoff::test::check_cut(text, {16384, 600, 0.75}, ref, p);

  // The same text again: the same output and still one file.
  const run_result again = handoff_project({input.string(), "--artifact-dir", store.string()});
  CHECK(again.out == r.out);
  CHECK(files_in(store).size() == 1);
}

TEST_CASE("the footer's bash commands name the CLI's own executable, not `handoff` on the PATH") {
  temp_dir tmp("handoff-cli");
  write_file(tmp / "in.txt", "first\n" + std::string(120000, 'x') + "\nlast\n");  // byte ranges
  const run_result r = handoff_project({(tmp / "in.txt").string(), "--artifact-dir", (tmp / "store").string()});
  REQUIRE(r.status == 0);
  // (the --bytes ranges, or the --plan command that lists them when they do not fit)
  CHECK(r.out.find("bash `'" + fs::canonical(HANDOFF_CLI_PATH).string() + "' read --") != std::string::npos);
}

TEST_CASE("the limits and head share options reach the projection") {
  temp_dir tmp("handoff-cli");
  const std::string text = numbered_report(3000);
  write_file(tmp / "in.txt", text);
  const run_result r =
      handoff_project({(tmp / "in.txt").string(), "--max-bytes", "4096", "--max-lines", "40",
                       "--head-share", "0.4", "--artifact-dir", (tmp / "store").string()});
  REQUIRE(r.status == 0);
  CHECK(r.out.size() <= 4096);
  CHECK(handoff::test::split_lines(r.out).size() <= 40);
  const handoff::test::projection_parts parts = handoff::test::split_projection(r.out, false);
  CHECK(parts.head.size() < parts.tail.size());  // 40% head
}

TEST_CASE("--json carries the projection and its metadata") {
  temp_dir tmp("handoff-cli");
  const std::string text = numbered_report(1000);
  write_file(tmp / "in.txt", text);
  const fs::path store = tmp / "store";
  const run_result r =
      handoff_project({(tmp / "in.txt").string(), "--artifact-dir", store.string(), "--json"});
  REQUIRE(r.status == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const std::string sha = sha256sum(tmp / "in.txt");
  CHECK(j["truncated"] == true);
  CHECK(j["totalBytes"] == text.size());
  CHECK(j["totalLines"] == 1002);
  CHECK(j["artifact"]["saved"] == true);
  CHECK(j["artifact"]["sha256"] == sha);
  CHECK(j["artifact"]["path"] == (store / (sha + ".txt")).string());
  CHECK(j["artifact"]["reason"].is_null());
  const std::string projected = j["text"];
  const auto reads =
      handoff::test::parse_footer(handoff::test::split_projection(projected, false).footer);
  REQUIRE(reads.has_value());
  CHECK(j["omitted"]["offset"] == reads->first);
  CHECK(j["omitted"]["limit"] == reads->last - reads->first + 1);
  CHECK(j["headLines"] == reads->first - 1);
  CHECK(j["tailLines"] == 1002 - reads->last);

  write_file(tmp / "short.txt", "fits");
  const nlohmann::json small =
      nlohmann::json::parse(handoff_project({(tmp / "short.txt").string(), "--json"}).out);
  CHECK(small["text"] == "fits");
  CHECK(small["truncated"] == false);
  CHECK(small["omitted"].is_null());
  CHECK(small["artifact"].is_null());
}

TEST_CASE("a store that cannot be used still prints head and tail, saying NOT saved") {
  temp_dir tmp("handoff-cli");
  const std::string text = numbered_report(1000);
  write_file(tmp / "in.txt", text);
  write_file(tmp / "plain-file", "not a directory");
  const fs::path open_dir = tmp / "open-to-all";
  fs::create_directory(open_dir);
  fs::permissions(open_dir, fs::perms::all);
  for (const fs::path& store : {tmp / "plain-file" / "store", open_dir}) {
    CAPTURE(store);
    const run_result r =
        handoff_project({(tmp / "in.txt").string(), "--artifact-dir", store.string()});
    CHECK(r.status == 0);
    CHECK(r.out.substr(0, 6) == "BEGIN\n");
    CHECK(r.out.find("\nEND\n[Truncated: ") != std::string::npos);
    CHECK(r.out.find("Full text NOT saved (") != std::string::npos);
    CHECK(r.out.find(store.string() + "/") == std::string::npos);
    CHECK(r.out.find("offset=") == std::string::npos);
    CHECK(r.out.size() <= 16384);
  }
  CHECK(files_in(open_dir).empty());

  const run_result j =
      handoff_project({(tmp / "in.txt").string(), "--artifact-dir", open_dir.string(), "--json"});
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  CHECK(doc["artifact"]["saved"] == false);
  CHECK(doc["artifact"]["path"].is_null());
  CHECK(doc["artifact"]["reason"].get<std::string>().size() > 0);
}

TEST_CASE("bad options exit 2, unreadable input exits 1") {
  temp_dir tmp("handoff-cli");
  write_file(tmp / "in.txt", "text");
  const std::string in = (tmp / "in.txt").string();
  CHECK(handoff_project({in, "--max-bytes", "511"}).status == 2);
  CHECK(handoff_project({in, "--max-bytes", "-1"}).status == 2);
  CHECK(handoff_project({in, "--max-bytes", "lots"}).status == 2);
  CHECK(handoff_project({in, "--max-lines", "7"}).status == 2);
  CHECK(handoff_project({in, "--head-share", "0.96"}).status == 2);
  CHECK(handoff_project({in, "--no-such-option"}).status == 2);
  CHECK(handoff_project({(tmp / "missing.txt").string()}).status == 1);
  CHECK(handoff_project({tmp.path().string()}).status == 1);                     // a directory
  CHECK(run_shell(std::string(HANDOFF_CLI_PATH) + " 2>/dev/null").status == 2);  // no subcommand
  CHECK(handoff_project({in, "--help"}).status == 0);
}

TEST_CASE("the bundled sample keeps its verdict, changed files, risks and next steps") {
  temp_dir tmp("handoff-cli");
  const std::string sample = std::string(HANDOFF_SOURCE_DIR) + "/samples/long-report.md";
  const run_result r = handoff_project({sample, "--artifact-dir", (tmp / "store").string()});
  REQUIRE(r.status == 0);
  CHECK(r.out.size() <= 16384);
  CHECK(r.out.find("[... middle omitted: ") != std::string::npos);
  for (const char* heading : {"# Subagent report", "## 5. Verdict", "## 6. Changed files",
                              "## 8. Risks", "## 9. Next steps"}) {
    CAPTURE(heading);
    CHECK(r.out.find(heading) != std::string::npos);
  }
}
