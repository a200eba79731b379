#include "cli/harness/codex/views.hpp"

#include <algorithm>
#include <stdexcept>

#include "cli/harness/codex/child_text.hpp"

namespace handoff::cli::codex {
namespace {

constexpr std::size_t list_bytes = 2048;
constexpr std::size_t list_title_bytes = 60;

}  // namespace

std::optional<turn_view> view_of(const child& c, const std::string& id) {
  const turn* t = c.turns.empty() ? nullptr : c.turns.back().get();
  for (const std::unique_ptr<turn>& each : c.turns)
    if (each->id == id) t = each.get();
  if (t == nullptr) return std::nullopt;
  return turn_view{t->id, t->title, t->phase, t->status, t->preview, t->error};
}

std::vector<std::string> waited_turns(const std::vector<const child*>& all, const std::vector<std::string>& ids,
                                      const std::function<const child&(const std::string&)>& named) {
  std::vector<std::string> out;
  const auto add = [&out](const std::string& id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  };
  const auto add_open = [&add](const child& c) {  // false when it has none
    bool any = false;
    for (const std::unique_ptr<turn>& t : c.turns)
      if (!t->received && t->phase != phase::cancelled) {
        add(t->id);
        any = true;
      }
    return any;
  };
  if (ids.empty()) {
    for (const child* c : all) add_open(*c);
    return out;
  }
  for (const std::string& id : ids) {
    const child& c = named(id);
    if (id.find('.') != std::string::npos) {
      if (std::none_of(c.turns.begin(), c.turns.end(), [&id](const std::unique_ptr<turn>& t) { return t->id == id; }))
        throw std::invalid_argument("subagent " + c.id + " has no turn " + id);
      add(id);
    } else if (!add_open(c) && !c.turns.empty()) {
      add(c.turns.back()->id);
    }
  }
  return out;
}

std::string list_text(const std::vector<const child*>& children) {
  std::string out;
  std::size_t count = 0;
  std::size_t shown = 0;
  for (const child* c : children) {
    if (c->turns.empty()) continue;
    ++count;
    const turn& t = *c->turns.back();
    std::string state = t.phase == phase::finished ? (t.received ? "delivered" : "completed")
                                                   : std::string(phase_name(t.phase));
    if (t.phase == phase::finished && t.status == "error") state += " (error)";
    std::string line = c->id + " \"" + first_line(c->title, list_title_bytes) + "\": " + state;
    if (t.n > 1) line += ", turn " + std::to_string(t.n);
    line += "\n";
    if (out.size() + line.size() > list_bytes - 40) continue;
    out += line;
    ++shown;
  }
  if (count == 0) return "No subagents in this Codex thread.";
  if (shown < count) out += "(+" + std::to_string(count - shown) + " more not shown)\n";
  out.pop_back();
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace handoff::cli::codex
