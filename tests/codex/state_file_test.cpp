// The codex children's state file (client/cli/harness/codex/state_file.hpp) on a real directory.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli/harness/codex/state_file.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using namespace handoff::cli::codex;

std::unique_ptr<child> child_with(const std::string& id, std::vector<phase> phases) {
  auto c = std::make_unique<child>();
  c->id = id;
  c->parent = "thread/1";
  c->title = "title " + id;
  c->cwd = "/tmp";
  c->thread = "codex-thread";
  for (const phase p : phases) {
    auto t = std::make_unique<turn>();
    t->n = static_cast<int>(c->turns.size()) + 1;
    t->id = t->n == 1 ? id : id + "." + std::to_string(t->n);
    t->owner = c.get();
    t->phase = p;
    t->status = p == phase::finished ? "done" : "";
    t->reported = p != phase::running;
    c->turns.push_back(std::move(t));
  }
  return c;
}

}  // namespace

TEST_CASE("codex state file: written 0600 in a 0700 directory, read back, and a turn that was running comes back an error") {
  const handoff::test::temp_dir dir("codex-state");
  const fs::path state = dir / "state";
  const auto a = child_with("cx-aaaaaa", {phase::finished, phase::running});
  const auto b = child_with("cx-bbbbbb", {phase::cancelled});
  const mode_t was = ::umask(0);
  save_children(state, "thread/1", {a.get(), b.get()});
  ::umask(was);
  struct stat st {};
  REQUIRE(::stat((state / "thread_1.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat(state.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(std::distance(fs::directory_iterator(state), fs::directory_iterator()) == 1);  // no temp file left

  const auto loaded = load_children(state, "thread/1");
  REQUIRE(loaded.size() == 2);
  const child& la = *loaded[0];
  CHECK(la.id == "cx-aaaaaa");
  CHECK(la.title == "title cx-aaaaaa");
  CHECK(la.thread == "codex-thread");
  REQUIRE(la.turns.size() == 2);
  CHECK(la.turns[0]->phase == phase::finished);
  CHECK(la.turns[0]->status == "done");
  CHECK(la.turns[0]->owner == &la);
  CHECK(la.turns[1]->id == "cx-aaaaaa.2");
  CHECK(la.turns[1]->phase == phase::finished);
  CHECK(la.turns[1]->status == "error");
  CHECK(la.turns[1]->error == "the handoff mcp server running this subagent exited before it finished");
  CHECK(!la.turns[1]->reported);
  CHECK(loaded[1]->turns[0]->phase == phase::cancelled);
}

TEST_CASE("codex state file: absent or not JSON gives no children, and a state dir that cannot be made is no error") {
  const handoff::test::temp_dir dir("codex-state");
  CHECK(load_children(dir / "none", "t").empty());
  std::ofstream(dir / "t.json") << "{not json";
  CHECK(load_children(dir.path(), "t").empty());
  std::ofstream(dir / "file") << "x";
  const auto a = child_with("cx-aaaaaa", {phase::finished});
  save_children(dir / "file" / "below", "t", {a.get()});  // ENOTDIR: silently nothing
  CHECK(!fs::exists(dir / "file" / "below"));
}
