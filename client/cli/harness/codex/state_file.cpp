#include "cli/harness/codex/state_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <system_error>

#include <nlohmann/json.hpp>

#include "cli/harness/codex/child_text.hpp"
#include "cli/harness/codex/file_reads.hpp"
#include "engine/fs/atomic_file.hpp"

namespace handoff::cli::codex {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t max_state_bytes = 16 << 20;

std::unique_ptr<turn> load_turn(const json& saved, child& owner) {
  auto t = std::make_unique<turn>();
  t->id = saved.value("id", "");
  t->n = saved.value("n", 1);
  t->title = saved.value("title", "");
  t->owner = &owner;
  // An unknown phase is taken as one that had not ended.
  t->phase = phase_named(saved.value("phase", "finished")).value_or(phase::running);
  t->status = saved.value("status", "");
  t->received = saved.value("received", false);
  t->reported = saved.value("reported", true);
  if (t->phase != phase::finished && t->phase != phase::cancelled) {
    // Its server died with it (PR_SET_PDEATHSIG): say so as its result.
    t->phase = phase::finished;
    t->status = "error";
    t->error = "the handoff mcp server running this subagent exited before it finished";
    t->reported = false;
  } else if (t->phase == phase::finished && !t->reported) {
    t->status = "error";
    t->error = "its answer was lost: the handoff mcp server exited before handoffd took it";
  }
  return t;
}

}  // namespace

std::vector<std::unique_ptr<child>> load_children(const fs::path& state_dir, const std::string& parent) {
  std::vector<std::unique_ptr<child>> out;
  const std::optional<std::string> text = read_whole(state_dir / (file_name(parent) + ".json"), max_state_bytes);
  if (!text) return out;
  const json state = json::parse(*text, nullptr, false);
  if (!state.is_object() || !state.contains("children") || !state["children"].is_array()) return out;
  for (const json& saved : state["children"]) {
    if (!saved.is_object()) continue;
    auto c = std::make_unique<child>();
    c->id = saved.value("id", "");
    if (c->id.empty()) continue;
    c->parent = parent;
    c->title = saved.value("title", "");
    c->cwd = saved.value("cwd", "");
    c->model = saved.value("model", "");
    c->thread = saved.value("thread", "");
    for (const json& st : saved.value("turns", json::array()))
      if (st.is_object()) c->turns.push_back(load_turn(st, *c));
    out.push_back(std::move(c));
  }
  return out;
}

void save_children(const fs::path& state_dir, const std::string& parent, const std::vector<const child*>& children) {
  json list = json::array();
  for (const child* c : children) {
    json turns = json::array();
    for (const std::unique_ptr<turn>& t : c->turns)
      turns.push_back({{"id", t->id}, {"n", t->n}, {"title", t->title}, {"phase", phase_name(t->phase)},
                       {"status", t->status}, {"received", t->received}, {"reported", t->reported}});
    list.push_back({{"id", c->id}, {"title", c->title}, {"cwd", c->cwd}, {"model", c->model}, {"thread", c->thread},
                    {"turns", std::move(turns)}});
  }
  std::error_code ec;
  fs::create_directories(state_dir, ec);
  ::chmod(state_dir.c_str(), 0700);
  const unique_fd dir(::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return;
  try {
    write_file_atomically(dir.get(), file_name(parent) + ".json", json{{"children", std::move(list)}}.dump(),
                          publish_mode::replace, "the codex subagents' state file");
  } catch (const std::exception&) {
    // Best effort (the contract above): the server goes on with what it holds in memory.
  }
}

}  // namespace handoff::cli::codex
