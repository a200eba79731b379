#include "cli/harness/core/plugin_js.hpp"

#include <cstddef>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace handoff::cli::hook_core {
namespace {

// @ARGS@: the spawned arguments, ["hook", NAME]; @WHAT@: "handoff hook NAME", for the errors.
// The kill timer is cleared only once the child has exited (or never ran): an "error" event
// from a child still running leaves the kill at `ms` in place.
constexpr std::string_view run_hook_template = R"JS(function runHook(input, ms) {
  const what = @WHAT@;
  return new Promise((resolve) => {
    const out = [];
    let err = "";
    let done = false;
    let child;
    let timer;
    const running = () => child?.pid !== undefined && child.exitCode === null && child.signalCode === null;
    const finish = (r) => {
      if (!running()) clearTimeout(timer);
      if (done) return;
      done = true;
      resolve(r);
    };
    try {
      child = spawn(HANDOFF, @ARGS@, { stdio: ["pipe", "pipe", "pipe"] });
      timer = setTimeout(() => {
        try { if (running()) child.kill("SIGKILL"); } catch {}
        finish({ error: `${what} gave no answer in ${ms} ms` });
      }, ms);
      child.on("error", (e) => finish({ error: String(e?.message ?? e) }));
      child.on("close", (code) =>
        finish(code === 0 ? { out: Buffer.concat(out).toString("utf8") }
                          : { error: `${what} exited ${code}: ${err.trim().split("\n")[0].slice(0, 400)}` }));
      child.stdout.on("data", (d) => out.push(d));
      child.stderr.on("data", (d) => { if (err.length < 400) err += d; });
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(input));
    } catch (e) {
      try { if (running()) child.kill("SIGKILL"); } catch {}
      finish({ error: String(e?.message ?? e) });
    }
  });
}
)JS";

bool slot_start(char c) { return c >= 'A' && c <= 'Z'; }
bool slot_char(char c) { return slot_start(c) || (c >= '0' && c <= '9') || c == '_'; }

// The length of the slot name at text[at + 1...] when text[at] opens a slot, else 0.
std::size_t slot_name_length(std::string_view text, std::size_t at) {
  std::size_t end = at + 1;
  if (end >= text.size() || !slot_start(text[end])) return 0;
  while (end < text.size() && slot_char(text[end])) ++end;
  return end < text.size() && text[end] == '@' ? end - at - 1 : 0;
}

}  // namespace

std::string run_hook_js(std::string_view hook_name) {
  return fill_slots(run_hook_template, {{"WHAT", js_string("handoff hook " + std::string(hook_name))},
                                        {"ARGS", "[\"hook\", " + js_string(hook_name) + "]"}});
}

std::string js_string(std::string_view value) {
  return nlohmann::json(std::string(value)).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

std::string fill_slots(std::string_view text, const std::vector<plugin_slot>& slots) {
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const std::string_view name = slots[i].first;
    if (name.empty() || !slot_start(name.front()) || name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string_view::npos)
      throw std::logic_error("plugin template: \"" + std::string(name) + "\" is not a slot name (A-Z, 0-9, _)");
    for (std::size_t j = 0; j < i; ++j)
      if (slots[j].first == name) throw std::logic_error("plugin template: @" + std::string(name) + "@ given twice");
  }
  std::vector<bool> used(slots.size(), false);
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  for (std::size_t at = text.find('@'); at != std::string_view::npos; at = text.find('@', at + 1)) {
    const std::size_t length = slot_name_length(text, at);
    if (length == 0) continue;
    const std::string_view name = text.substr(at + 1, length);
    std::size_t i = 0;
    while (i < slots.size() && slots[i].first != name) ++i;
    if (i == slots.size()) throw std::logic_error("plugin template: @" + std::string(name) + "@ has no value");
    out.append(text.substr(pos, at - pos));
    out += slots[i].second;
    used[i] = true;
    pos = at + length + 2;
    at = pos - 1;  // the closing '@': the next slot starts after it
  }
  out.append(text.substr(pos));
  for (std::size_t i = 0; i < slots.size(); ++i)
    if (!used[i]) throw std::logic_error("plugin template: no @" + std::string(slots[i].first) + "@ slot for its value");
  return out;
}

}  // namespace handoff::cli::hook_core
