// `handoff setup pi` (client/cli/harness/pi/settings.hpp) on real settings files in a temporary agent
// directory, with packages laid out as a build leaves them (the checkout's package.json, a
// dist/src/extension.js). What Pi itself then loads from them: client/pi/test/install/.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using handoff::test::run_cli;
using handoff::test::temp_dir;
using nlohmann::ordered_json;

namespace {


bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A built @handoff/pi package at `to` (another install of handoff, say).
fs::path make_package(const fs::path& to) {
  fs::create_directories(to / "dist" / "src");
  fs::copy_file(fs::path(HANDOFF_SOURCE_DIR) / "client" / "pi" / "package.json", to / "package.json");
  std::ofstream(to / "dist" / "src" / "extension.js") << "export default function () {}\n";
  return to;
}

struct agent {
  temp_dir dir{"handoff-setup-pi"};
  fs::path settings = dir / "agent" / "settings.json";
  fs::path checkout_package;
  agent() {
    fs::create_directories(dir / "agent");
    checkout_package = make_package(dir / "prefix" / "share" / "handoff" / "pi");
  }

  handoff::test::cli_result setup(std::vector<std::string> args) const {
    args.insert(args.begin(), {"setup", "pi"});
    return run_cli(args, {}, {"PI_CODING_AGENT_DIR=" + (dir / "agent").string(), "HOME=" + (dir / "home").string()});
  }
  void write(const std::string& text) const { std::ofstream(settings) << text; }
  std::string text() const {
    std::ifstream in(settings);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  ordered_json json() const { return ordered_json::parse(text()); }
};

}  // namespace

TEST_CASE("setup pi: the package is added as pi install writes it, in place of an older install's, the rest kept in order") {
  agent a;
  const fs::path older = make_package(a.dir / "old-install" / "pi");
  a.write(R"({"theme": "dark", "packages": ["npm:foo@1.0.0", ")" + older.string() + R"(", {"source": "npm:bar"}], "z": 1})");
  const auto r = a.setup({"--package", a.checkout_package.string()});
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(contains(r.out, "setup pi: wrote handoff's entries to " + a.settings.string()));
  CHECK(contains(r.out, "pi-subagents is not among Pi's packages: no bridge"));
  const ordered_json s = a.json();
  CHECK(s.dump() == ordered_json::parse(R"({"theme": "dark", "packages": ["npm:foo@1.0.0", ")" +
                                         fs::relative(a.checkout_package, a.dir / "agent").string() +
                                         R"(", {"source": "npm:bar"}], "z": 1})").dump());
  CHECK_FALSE(s.contains("extensions"));

  const std::string once = a.text();
  const auto again = a.setup({"--package", a.checkout_package.string()});
  CHECK(contains(again.out, "already has handoff's entries; nothing to change"));
  CHECK(a.text() == once);
}

TEST_CASE("setup pi: pi-subagents among the packages gets the bridge, and --remove takes out both and nothing else") {
  agent a;
  const ordered_json before = ordered_json::parse(R"({"packages": ["npm:pi-subagents@0.67.0"], "extensions": ["/opt/mine.js"]})");
  a.write(before.dump());
  CHECK(a.setup({"--package", a.checkout_package.string()}).status == 0);
  const ordered_json s = a.json();
  CHECK(s["extensions"] == ordered_json::array({"/opt/mine.js", (a.checkout_package / "dist/src/pi-subagents-bridge.js").string()}));
  CHECK(s["packages"].size() == 2);

  const auto dry = a.setup({"--remove", "--dry-run"});
  CHECK(contains(dry.out, "would write"));
  CHECK(a.json() == s);  // a dry run changes nothing
  const auto removed = a.setup({"--remove"});
  CHECK(contains(removed.out, "removed handoff's entries from"));
  CHECK(a.json() == before);
  CHECK(contains(a.setup({"--remove"}).out, "has no entry of handoff's; nothing to change"));
}

TEST_CASE("setup pi: what it does not edit is refused, and the file left as it was") {
  agent a;
  a.write(R"({"packages": "npm:foo"})");
  auto r = a.setup({"--package", a.checkout_package.string()});
  CHECK(r.status == 1);
  CHECK(contains(r.err, "\"packages\" is not an array"));
  CHECK(a.text() == R"({"packages": "npm:foo"})");

  a.write("{not json");
  r = a.setup({"--package", a.checkout_package.string()});
  CHECK(r.status == 1);
  CHECK(contains(r.err, "is not valid JSON; fix it first"));
  CHECK(a.text() == "{not json");

  r = a.setup({"--package", (a.dir / "nowhere").string()});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "is not the @handoff/pi package"));

  fs::remove(a.settings);
  fs::create_symlink(a.dir / "elsewhere.json", a.settings);
  r = a.setup({"--package", a.checkout_package.string()});
  CHECK(r.status == 1);
  CHECK(contains(r.err, "is a symlink"));
  CHECK_FALSE(fs::exists(a.dir / "elsewhere.json"));
}

TEST_CASE("setup pi: a new settings file is 0600 and --dry-run writes none") {
  agent a;
  const auto dry = a.setup({"--package", a.checkout_package.string(), "--dry-run"});
  CHECK(dry.status == 0);
  CHECK(contains(dry.out, "would write " + a.settings.string()));
  CHECK_FALSE(fs::exists(a.settings));
  CHECK(a.setup({"--package", a.checkout_package.string()}).status == 0);
  struct stat st {};
  REQUIRE(::stat(a.settings.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}
