#include "cli/harness/claude_code/spool.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "cli/harness/claude_code/notice.hpp"
#include "engine/fs/atomic_file.hpp"
#include "engine/fs/private_dir.hpp"
#include "engine/fs/sha256.hpp"

namespace handoff::cli::claude_code {
namespace {

using nlohmann::json;

// A session id as a directory name: itself when it is a plain id (Claude Code's are UUIDs),
// else its hash.
std::string session_dir_name(const std::string& session_id) {
  return plausible_agent_id(session_id) ? session_id : "h-" + sha256_hex(session_id).substr(0, 32);
}

std::string now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  char out[32];
  std::snprintf(out, sizeof out, "%019lld", static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec);
  return out;
}


// `shown` (a notice's report) ends with `text`'s last report_tail_bytes; Claude Code may drop a
// report's final newlines when it frames it.
bool shows_tail(std::string_view shown, std::string_view text) {
  const auto trimmed = [](std::string_view t) {
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.remove_suffix(1);
    return t;
  };
  const std::string_view end = trimmed(text);
  return trimmed(shown).ends_with(end.substr(end.size() - std::min(end.size(), report_tail_bytes)));
}

std::optional<std::string> read_small(int dir_fd, const std::string& name) {
  private_file f = open_private_file(dir_fd, name, name);
  if (f.state != private_file::status::ok) return std::nullopt;
  try {
    return read_all(f.fd.get(), max_spool_file_bytes, "reading " + name);
  } catch (const fs_error&) {
    return std::nullopt;
  }
}

// The session's directory under `base`, opened (created when `create`); an empty fd when it
// does not exist and is not to be made.
unique_fd open_session_dir(const std::filesystem::path& base, const std::string& session_id, bool create) {
  if (base.empty()) throw std::runtime_error("no state directory: set XDG_STATE_HOME or HOME");
  const std::filesystem::path dir = base / session_dir_name(session_id);
  if (!create) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) return {};
  }
  unique_fd base_fd = open_private_dir(base, "Claude Code spool");
  return open_private_subdir(base_fd.get(), session_dir_name(session_id), dir, "Claude Code spool");
}

}  // namespace

std::filesystem::path spool_base() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && state[0] == '/')
    return std::filesystem::path(state) / "handoff" / "claude-code";
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/')
    return std::filesystem::path(home) / ".local" / "state" / "handoff" / "claude-code";
  return {};
}

std::string prompt_key(const std::string& session_id, std::string_view prompt) {
  std::string keyed = session_id;
  keyed.push_back('\0');
  keyed.append(prompt);
  return sha256_hex(keyed).substr(0, 32);
}

std::optional<report_spool> report_spool::open_locked(const std::filesystem::path& base, const std::string& session_id,
                                                      bool create) {
  unique_fd dir = open_session_dir(base, session_id, create);
  if (!dir) return std::nullopt;
  unique_fd lock(::openat(dir.get(), "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock) throw fs_error(errno, "opening the Claude Code spool's lock");
  // Held for milliseconds by each hook; a holder stuck past spool_lock_wait is not waited out
  // (the caller lets its notice pass rather than keep the user waiting).
  const auto give_up = std::chrono::steady_clock::now() + spool_lock_wait;
  while (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) throw fs_error(errno, "locking the Claude Code spool");
    if (std::chrono::steady_clock::now() > give_up) throw std::runtime_error("the Claude Code spool stayed locked");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return report_spool(std::move(dir), std::move(lock));
}

std::vector<std::string> report_spool::names(std::string_view prefix) const {
  std::vector<std::string> out;
  for (std::string& name : list_names(dir_.get()))
    if (name.starts_with(prefix)) out.push_back(std::move(name));
  std::sort(out.begin(), out.end());  // <ns> is zero-padded: oldest first
  return out;
}

std::optional<spool_entry> report_spool::read_entry(const std::string& name) const {
  const std::optional<std::string> bytes = read_small(dir_.get(), name);
  if (!bytes) return std::nullopt;
  const json j = json::parse(*bytes, nullptr, false);
  if (!j.is_object() || !j.contains("text") || !j["text"].is_string() || !j.contains("children") ||
      !j["children"].is_array())
    return std::nullopt;
  spool_entry e;
  e.name = name;
  e.text = j["text"].get<std::string>();
  for (const json& c : j["children"])
    if (c.is_string()) e.children.push_back(c.get<std::string>());
  return e;
}

bool report_spool::holds(const std::string& child) const {
  for (const std::string_view prefix : {"pending-", "delivered-"})
    for (const std::string& name : names(prefix))
      if (const auto e = read_entry(name); e && std::find(e->children.begin(), e->children.end(), child) != e->children.end())
        return true;
  return false;
}

void report_spool::put(const std::vector<std::string>& children, const std::string& text) {
  const std::string bytes = json{{"children", children}, {"text", text}}.dump(-1, ' ', false, json::error_handler_t::replace);
  write_file_atomically(dir_.get(), "pending-" + now_ns() + ".json", bytes, publish_mode::no_replace,
                        "a bounded report for Claude Code");
}

std::vector<spool_entry> report_spool::pending() const {
  std::vector<spool_entry> out;
  for (const std::string& name : names("pending-"))
    if (auto e = read_entry(name)) out.push_back(std::move(*e));
  return out;
}

void report_spool::mark_delivered(const spool_entry& e) {
  const std::string done = "delivered-" + e.name.substr(std::string_view("pending-").size());
  if (::renameat(dir_.get(), e.name.c_str(), dir_.get(), done.c_str()) != 0)
    throw fs_error(errno, "marking a bounded report delivered");
  sync_quietly(dir_.get());
  // Old records go: a notice comes within seconds of its report, not a day later. Best effort:
  // what is left is tried again next time.
  try {
    const auto now = std::chrono::system_clock::now();
    for (const std::string_view prefix : {"delivered-", "decision-", "started-", "report-"})
      for (const std::string& name : names(prefix)) {
        struct stat st {};
        if (::fstatat(dir_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (now - std::chrono::system_clock::from_time_t(st.st_mtime) > delivered_keep) remove_name(dir_.get(), name, name);
      }
  } catch (const std::exception&) {
  }
}

void report_spool::note_report(const std::string& child, std::string_view text) {
  std::size_t from = text.size() > report_tail_bytes ? text.size() - report_tail_bytes : 0;
  while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;  // a whole character
  write_file_atomically(dir_.get(), "report-" + child, text.substr(from), publish_mode::replace, "a report's tail");
}

std::optional<std::string> report_spool::report_shown(const std::string& agent_id, std::string_view shown,
                                                      bool any) const {
  // report-<agent>, report-<agent>.2, ...: newest (highest) first.
  std::vector<std::pair<int, std::string>> mine;
  for (const std::string& name : names("report-" + agent_id)) {
    const std::string child = name.substr(7);
    if (child == agent_id) {
      mine.emplace_back(1, child);
    } else if (child.size() > agent_id.size() + 1 && child[agent_id.size()] == '.') {
      const std::string n = child.substr(agent_id.size() + 1);
      if (n.find_first_not_of("0123456789") == std::string::npos && n.size() < 4) mine.emplace_back(std::stoi(n), child);
    }
  }
  std::sort(mine.rbegin(), mine.rend());
  for (const auto& [n, child] : mine) {
    if (any) return child;
    const std::optional<std::string> tail = read_small(dir_.get(), "report-" + child);
    if (tail && shows_tail(shown, *tail)) return child;
  }
  return std::nullopt;
}

void report_spool::note_started(const std::filesystem::path& base, const std::string& session_id,
                                const std::string& key) {
  unique_fd dir = open_session_dir(base, session_id, true);
  write_file_atomically(dir.get(), "started-" + key, "", publish_mode::replace, "the deliverer's start",
                        temp_method::automatic, when_synced::by_caller);
}

bool report_spool::started(const std::string& key) const {
  struct stat st {};
  return ::fstatat(dir_.get(), ("started-" + key).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

void report_spool::note_passed(const std::string& agent_id) {
  write_file_atomically(dir_.get(), "passed-" + agent_id, "", publish_mode::replace, "a passed report's record");
}

std::vector<std::string> report_spool::passed() const {
  std::vector<std::string> out;
  for (const std::string& name : names("passed-")) out.push_back(name.substr(7));
  return out;
}

void report_spool::keep_local_report(const std::string& agent_id, std::string_view text) {
  write_file_atomically(dir_.get(), "local-" + agent_id, text, publish_mode::replace, "a report handoffd did not take");
}

std::optional<std::string> report_spool::local_report(const std::string& agent_id, std::string_view shown,
                                                      bool any) const {
  private_file f = open_private_file(dir_.get(), "local-" + agent_id, "a report handoffd did not take");
  if (f.state != private_file::status::ok) return std::nullopt;
  try {
    std::string text = read_all(f.fd.get(), max_local_report_bytes, "reading a report handoffd did not take");
    if (text.empty() || !(any || shows_tail(shown, text))) return std::nullopt;
    return text;
  } catch (const fs_error&) {
    return std::nullopt;
  }
}

void report_spool::forget_local_report(const std::string& agent_id) {
  remove_name(dir_.get(), "local-" + agent_id, agent_id);
}

void report_spool::forget_passed(const std::string& agent_id) { remove_name(dir_.get(), "passed-" + agent_id, agent_id); }

void report_spool::decide(const std::string& key, const std::string& decision) {
  write_file_atomically(dir_.get(), "decision-" + key, decision, publish_mode::replace, "the gate's decision");
}

std::optional<std::string> report_spool::decision(const std::filesystem::path& base, const std::string& session_id,
                                                  const std::string& key) {
  try {
    unique_fd dir = open_session_dir(base, session_id, false);
    if (!dir) return std::nullopt;
    return read_small(dir.get(), "decision-" + key);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void report_spool::forget_decision(const std::filesystem::path& base, const std::string& session_id,
                                   const std::string& key) {
  try {
    if (unique_fd dir = open_session_dir(base, session_id, false)) {
      remove_name(dir.get(), "decision-" + key, key);
      remove_name(dir.get(), "started-" + key, key);
    }
  } catch (const std::exception&) {
    // a stale decision is removed with the delivered copies
  }
}

}  // namespace handoff::cli::claude_code
