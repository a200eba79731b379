// How a parent's harness reads an artifact back: the page its file-reading tool returns uncut,
// the names of its tools, and what it adds to each line it shows. The footer's calls
// (projection_notice.hpp) and read_plan (text_page.hpp) are sized by it, so every call a footer
// names returns exactly its lines in that harness (docs/design.md §4).
//
// Six profiles, chosen by the parent's client (`reader` in subagent/wait, `handoff read
// --reader`); reader_profiles lists them, and the wire's accepted names (protocol/messages.hpp's
// reader_names) are checked against it at compile time (daemon/service/wait.cpp):
//   pi           Pi 1.6.0's `read` and `bash`: a page is at most 2000 lines and 51,200 bytes of
//                the lines joined with "\n"; nothing is added to a line.
//   claude-code  Claude Code 2.1.328's and 2.1.332's `Read` and `Bash`: Read refuses a page its count_tokens
//                puts over 25,000 tokens and prefixes every line with its number and a tab. No
//                tokenizer makes more tokens than UTF-8 bytes, so a page of at most 20,000 bytes,
//                each line's 8-byte prefix counted, is under the cap with room for the framing,
//                for any text (ASCII or CJK). Bash shows 30,000 characters uncut; its byte
//                ranges are at most 20,000 bytes.
//   codex        Codex CLI 0.169.0 and 0.171.0 give a model it has no metadata for no file-reading tool,
//                only its shell, `exec_command`, whose output it cuts past 10,000 bytes (40,000
//                for its catalog models): a line range is `sed -n 'FIRST,LASTp' FILE` run by
//                it, at most 8,000 bytes a page, so the shell's own header fits beside it.
//   gemini       Gemini CLI 0.61.0's `read_file {file_path, start_line, end_line}` (1-based,
//                inclusive): no byte cap on a page, but every line over 2,000 characters is
//                cut, so a line of more than 2,000 bytes is read in byte ranges through its
//                shell tool, `run_shell_command`, whose output it cuts past 40,000 characters:
//                pages of at most 32,000 bytes.
//   opencode     opencode 1.18.33's `read {filePath, offset, limit}` (1-based): pages of at most
//                2000 lines and 51,200 bytes, prefixes not counted; lines over 2,000 characters
//                cut, so they are read in byte ranges through its `bash`.
//   cline        cline 3.0.65's `read_files {files: [{path, start_line, end_line}]}` (1-based,
//                inclusive): every line shown as "N | line", N right-aligned to the widest number
//                of the range; cline cuts every string of a tool result over 8,000 characters in
//                its middle, a page's text among them, so pages are at most 8,000 bytes with 10
//                bytes a line for the prefix (numbers up to 7 digits); its shell, `run_commands`,
//                is cut the same way. The bounded answer itself is held under that cut too
//                (result_bytes).
//   copilot      GitHub Copilot CLI 1.0.102's `view {path, view_range: [FIRST, LAST]}` (1-based,
//                inclusive): the lines joined with "\n", nothing added to a line, cut at 20,480
//                bytes (whatever the line count: 5,000 lines of 2 bytes came back whole); Copilot
//                then replaces any tool output over 20,480 bytes with a 500-character preview.
//                Pages of at most 20,000 bytes, so its `bash` (which drops the output's trailing
//                newlines and appends "\n<shellId: N completed with exit code C>") stays under
//                the cut with a byte range too. The bounded answer is held under that cut
//                (result_bytes), read_agent's status header counted in frame_bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace handoff {

struct reader_profile {
  std::string_view name;          // the wire name: "pi", "claude-code", "codex", "gemini", "opencode", "cline", "copilot"
  std::string_view read_tool;     // the file-reading tool the footer names ("read", "Read", "read_file")
  std::string_view bash_tool;     // the shell tool for byte ranges and the plan command
  std::size_t page_lines;         // most lines one read returns uncut
  std::size_t page_bytes;         // most bytes one read returns uncut: the lines, the "\n"
                                  // between them, and line_prefix_bytes per line
  std::size_t line_prefix_bytes;  // bytes the read tool adds to each line it shows (counted
                                  // against page_bytes)
  // What the harness wraps a delivered result in, counted against the caps so that what its
  // model reads stays within them: bytes around the whole result, and bytes added to each of
  // its lines. Pi shows a batch as it is (0, 0). Claude Code 2.1.328 frames an Agent's answer
  // in its "[Subagent hand-back]" notice and agentId line (measured: under 600 bytes with an
  // agentId of 17 characters and the hook's own note) and indents every line by two spaces.
  std::size_t frame_bytes;
  std::size_t line_indent_bytes;
  // A line range is read with the shell tool (`bash_tool `sed -n 'F,Lp' FILE``) instead of
  // `read_tool offset=F limit=N`: the harness has no file-reading tool (Codex).
  bool lines_by_shell = false;
  // How a line of the full text is reached, as an outline's header says it ("read offset=LINE").
  std::string_view line_jump = {};
  // Most bytes of one line the read tool shows whole (0: a page's bytes, less the line's prefix);
  // a longer line is read in byte ranges through the shell tool. Gemini CLI cuts lines over
  // 2,000 characters, and a line of 2,000 bytes never has more characters (UTF-16 units).
  std::size_t line_bytes = 0;
  // How a line range is written for read_tool (when not lines_by_shell).
  enum class range_args {
    offset_limit,  // `read_tool offset=FIRST limit=COUNT` (Pi, Claude Code, opencode)
    start_end,     // `read_tool start_line=FIRST end_line=LAST` (Gemini CLI's read_file)
    view_range,    // `read_tool view_range=[FIRST,LAST]` (Copilot CLI's view)
  };
  range_args line_args = range_args::offset_limit;
  // Who shows a `handoff read --plan` output's calls whole, as its header says it.
  std::string_view shown_by = {};
  // Most bytes of calls or headings one `handoff read --plan` / `--outline` output holds: well
  // within what the harness's shell tool shows uncut.
  std::size_t plan_bytes = 16 * 1024;
  // Most bytes of one result the harness shows whole, its frame included: cline cuts every tool
  // result's strings in the middle past 8,000 characters (and a character is never fewer UTF-8
  // bytes than UTF-16 units); Copilot CLI replaces a task's result over 20,480 bytes with a
  // preview. Each section for this reader is held within it, handoffd's and the hook's own
  // (framed_caps); the batch's budget is not lowered. 0: no such cut.
  std::size_t result_bytes = 0;
};

inline constexpr reader_profile pi_reader{
    .name = "pi", .read_tool = "read", .bash_tool = "bash", .page_lines = 2000, .page_bytes = 50 * 1024,
    .line_prefix_bytes = 0, .frame_bytes = 0, .line_indent_bytes = 0, .line_jump = "read offset=LINE",
    .shown_by = "Pi (read: its read tool on that path; bash: its bash tool)", .plan_bytes = 32 * 1024};
inline constexpr reader_profile claude_code_reader{
    .name = "claude-code", .read_tool = "Read", .bash_tool = "Bash", .page_lines = 2000, .page_bytes = 20000,
    .line_prefix_bytes = 8, .frame_bytes = 768, .line_indent_bytes = 2, .line_jump = "Read offset=LINE",
    .shown_by = "Claude Code (Read: its Read tool with file_path set to that path; Bash: its Bash tool)"};
// Codex: the batch reaches its model as an MCP tool's output (`handoff mcp`), which the server
// keeps under Codex's own cut with subagent/wait's maxBytes; nothing is added to it or its lines.
inline constexpr reader_profile codex_reader{
    .name = "codex", .read_tool = "exec_command", .bash_tool = "exec_command", .page_lines = 2000,
    .page_bytes = 8000, .line_prefix_bytes = 0, .frame_bytes = 0, .line_indent_bytes = 0, .lines_by_shell = true,
    .line_jump = "exec_command `sed -n 'LINE,+99p'` on it",
    .shown_by = "Codex (exec_command: its shell tool)", .plan_bytes = 6 * 1024};

// Gemini CLI: the bounded text reaches its model as read_file's result of a file the hook wrote
// (`handoff hook gemini`'s tailToolCallRequest), which adds nothing to it or its lines.
inline constexpr reader_profile gemini_reader{
    .name = "gemini", .read_tool = "read_file", .bash_tool = "run_shell_command", .page_lines = 2000,
    .page_bytes = 32000, .line_prefix_bytes = 0, .frame_bytes = 0, .line_indent_bytes = 0,
    .line_jump = "read_file start_line=LINE", .line_bytes = 2000,
    .line_args = reader_profile::range_args::start_end,
    .shown_by = "Gemini CLI (read_file: its read_file tool with file_path set to that path; run_shell_command: its "
                "shell tool)",
    .plan_bytes = 16 * 1024};

// opencode 1.18.33: the bounded text reaches its model as the task tool's output, which handoff's
// plugin (`handoff hook opencode`) rewrites inside opencode's own `<task id=... state=...>
// <task_result>` frame (under 128 bytes, counted). Its `read {filePath, offset (1-based), limit}`
// returns at most 2000 lines and 51,200 bytes of the lines joined with "\n" (its "N: " prefixes
// not counted, and read is exempt from opencode's generic output cut), and cuts every line over
// 2,000 characters, so a longer line is read in byte ranges through `bash`.
inline constexpr reader_profile opencode_reader{
    .name = "opencode", .read_tool = "read", .bash_tool = "bash", .page_lines = 2000, .page_bytes = 51200,
    .line_prefix_bytes = 0, .frame_bytes = 128, .line_indent_bytes = 0, .line_jump = "read offset=LINE",
    .line_bytes = 2000,
    .shown_by = "opencode (read: its read tool with filePath set to that path; bash: its bash tool)",
    .plan_bytes = 16 * 1024};

// cline 3.0.65: the bounded text reaches its model as spawn_agent's result, which handoff's plugin
// (`handoff hook cline`) replaces with the section alone (no frame). cline cuts each string of a
// tool result past 8,000 characters (CLINE_MESSAGE_BUILDER_MAX_TOOL_RESULT_CHARS), keeping its
// first and last halves: the section, a read_files page and a run_commands output alike. Its
// read_files shows a range's lines as "N | line", N padded to the range's widest number (10 bytes
// a line allows numbers up to 9,999,999), and reads at most 2000 lines a call.
inline constexpr reader_profile cline_reader{
    .name = "cline", .read_tool = "read_files", .bash_tool = "run_commands", .page_lines = 2000,
    .page_bytes = 8000, .line_prefix_bytes = 10, .frame_bytes = 0, .line_indent_bytes = 0,
    .line_jump = "read_files start_line=LINE", .line_args = reader_profile::range_args::start_end,
    .shown_by = "cline (read_files: its read_files tool with path set to that path; run_commands: its shell tool)",
    .plan_bytes = 6 * 1024, .result_bytes = 8000};

// GitHub Copilot CLI 1.0.102: the bounded text reaches its model as the task tool's result (or
// read_agent's, for a background agent), which handoff's subagentStop hook (`handoff hook
// copilot`) gives as the child's response, under Copilot's 20,480-byte cut (result_bytes). A
// sync task adds nothing to it; read_agent puts a status header of under 300 bytes before it
// (counted in frame_bytes). view has no line cap and no line prefix.
inline constexpr reader_profile copilot_reader{
    .name = "copilot", .read_tool = "view", .bash_tool = "bash", .page_lines = 2000, .page_bytes = 20000,
    .line_prefix_bytes = 0, .frame_bytes = 512, .line_indent_bytes = 0, .line_jump = "view view_range=[LINE,-1]",
    .line_args = reader_profile::range_args::view_range,
    .shown_by = "Copilot CLI (view: its view tool with path set to that path; bash: its bash tool)",
    .plan_bytes = 16 * 1024, .result_bytes = 20 * 1024};

// Every profile, in the order of the wire's reader_names.
inline constexpr const reader_profile* reader_profiles[] = {&pi_reader,       &claude_code_reader, &codex_reader,
                                                            &gemini_reader,   &opencode_reader,    &cline_reader,
                                                            &copilot_reader};

// The profile named `name`, or nullptr for a name handoff does not know.
constexpr const reader_profile* find_reader_profile(std::string_view name) noexcept {
  for (const reader_profile* profile : reader_profiles) {
    if (profile->name == name) return profile;
  }
  return nullptr;
}

// Every profile's name, in order.
inline std::vector<std::string> reader_names() {
  std::vector<std::string> names;
  for (const reader_profile* profile : reader_profiles) names.emplace_back(profile->name);
  return names;
}

// The names as a list for help texts and messages: "a, b or c".
inline std::string reader_list() {
  std::string out;
  const std::vector<std::string> names = reader_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

// The bytes a page of `lines` lines holding `text_bytes` bytes (the "\n" between them
// included) costs against page_bytes.
constexpr std::size_t page_cost(const reader_profile& profile, std::size_t text_bytes,
                                std::size_t lines) noexcept {
  return text_bytes + lines * profile.line_prefix_bytes;
}

// The most bytes of one line the read tool shows whole.
constexpr std::size_t line_cap(const reader_profile& profile) noexcept {
  const std::size_t page = profile.page_bytes - profile.line_prefix_bytes;
  return profile.line_bytes == 0 ? page : std::min(profile.line_bytes, page);
}

}  // namespace handoff
