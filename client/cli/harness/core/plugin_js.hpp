// What a harness's JavaScript plugin (cline's, opencode's) shares, written once in C++: the
// plugin's `runHook(input, ms)`, which runs `handoff hook NAME` with the input as JSON on stdin,
// and the filling of a plugin template's @SLOT@s. Each harness keeps its own template, its own
// hooks and its own time limits; only the text of these two parts comes from here.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace handoff::cli::hook_core {

// The JavaScript text of `function runHook(input, ms)` for `handoff hook <hook_name>`. The module
// it goes in must import `spawn` from "node:child_process" and define `const HANDOFF`, the
// executable's path. runHook spawns HANDOFF with ["hook", hook_name], writes JSON.stringify(input)
// on its stdin and returns a promise that always resolves (never rejects, never throws):
//   { out }    the hook exited 0: everything it printed, as UTF-8 text
//   { error }  it could not be spawned, or the input not written; it exited non-zero ("handoff
//              hook NAME exited CODE: " and the first line of its stderr, 400 characters at most);
//              or it gave no answer within `ms` milliseconds: it is killed (SIGKILL) then.
// The child never runs past `ms`: whatever ended the promise, the kill at `ms` stands until the
// child has exited.
std::string run_hook_js(std::string_view hook_name);

// `value` as a JavaScript string literal (its JSON text; bytes that are not UTF-8 replaced).
std::string js_string(std::string_view value);

// A template slot and its value: "HANDOFF" fills every @HANDOFF@.
using plugin_slot = std::pair<std::string_view, std::string>;

// `text` with every @NAME@ slot (NAME: A-Z, 0-9, _, from a letter) replaced by its value, in
// one pass over the template (a value is never scanned for slots). Throws std::logic_error when
// the template holds a slot that has no value, or a value's slot is not in the template (or is
// given twice): a typo never ships a plugin holding a literal @HANDOFF@.
std::string fill_slots(std::string_view text, const std::vector<plugin_slot>& slots);

}  // namespace handoff::cli::hook_core
