#include "cli/harness/codex/children.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "utf8.hpp"

extern char** environ;

namespace handoff::cli::codex {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using steady = std::chrono::steady_clock;

constexpr std::size_t max_prompt_bytes = 100 * 1024;  // one argv string stays under Linux's 128 KiB
constexpr std::size_t max_title_bytes = 1024;
constexpr std::size_t preview_bytes = 2048;
constexpr std::size_t max_event_line_bytes = 4 << 20;  // a longer `--json` event line is skipped
constexpr std::size_t max_final_bytes = 64 << 20;      // handoffd's maxFinalTextBytes
constexpr std::size_t list_bytes = 2048;
constexpr auto progress_every = std::chrono::seconds(1);
constexpr auto kill_grace = std::chrono::seconds(5);

// `s` with every byte that is not part of well-formed UTF-8 replaced by '?'.
std::string valid_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    if (*p < 0x80) {
      out.push_back(static_cast<char>(*p++));
      continue;
    }
    const std::size_t n = utf8_sequence_length(p, end);
    if (n == 0) {
      out.push_back('?');
      ++p;
      continue;
    }
    out.append(reinterpret_cast<const char*>(p), n);
    p += n;
  }
  return out;
}

// The last `most` bytes of `s`, from a character boundary.
std::string tail_text(std::string_view s, std::size_t most) {
  if (s.size() <= most) return std::string(s);
  return std::string(s.substr(utf8_ceil(s, s.size() - most)));
}

std::string read_file(const fs::path& path, std::size_t most, bool& ok) {
  ok = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return {};
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    if (out.size() + static_cast<std::size_t>(n) > most) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string new_child_id() {
  static std::mt19937_64 random{std::random_device{}()};
  static std::mutex guard;
  const std::lock_guard<std::mutex> hold(guard);
  char id[16];
  std::snprintf(id, sizeof id, "cx-%06llx", static_cast<unsigned long long>(random() & 0xFFFFFF));
  return id;
}

// A file name for a parent thread id (a UUID from Codex): other bytes as '_'.
std::string file_name(std::string_view id) {
  std::string out;
  for (const char c : id) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_');
  return out.empty() ? std::string("_") : out;
}

std::string first_line(std::string_view text, std::size_t most) {
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return "subagent";
  text.remove_prefix(start);
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  if (text.size() <= most) return std::string(text);
  return std::string(text.substr(0, utf8_floor(text, most - 3))) + "...";
}

// A one-line summary of a `codex exec --json` item, for check's preview.
std::string activity_of(const json& item) {
  const std::string type = item.value("type", "");
  if (type == "agent_message") return item.value("text", "");
  if (type == "command_execution") return "$ " + item.value("command", "");
  if (type == "reasoning") return item.value("text", "");
  if (type == "file_change") return "changed files";
  if (type == "mcp_tool_call") return "tool " + item.value("tool", "");
  return type;
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "codex exec exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "codex exec was killed by signal " + std::to_string(WTERMSIG(status));
  return "codex exec ended oddly";
}

}  // namespace

struct codex_children::turn {
  std::string id;
  int n = 1;
  std::string title;
  std::string prompt;  // "" once started
  child* owner = nullptr;
  std::string phase = "queued";  // waiting, queued, running, finished, cancelled
  pid_t pid = -1;
  bool reported = false;  // handoffd has its completion (or nothing is left to report)
  bool received = false;  // the parent has its result
  std::string status;     // done, error
  std::string error;
  std::string final_text;  // until reported
  std::string preview;
  steady::time_point last_progress{};
};

struct codex_children::child {
  std::string id;
  std::string parent;
  std::string title;
  std::string cwd;
  std::string model;
  std::string thread;  // Codex's thread id of the child's conversation (from its first turn)
  std::vector<std::unique_ptr<turn>> turns;
};

codex_children::codex_children(codex_children_options options) : options_(std::move(options)) {
  reporter_ = std::thread([this] { report_loop(); });
}

codex_children::~codex_children() {
  shutdown();
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  reporter_.join();
  for (std::thread& w : watchers_) w.join();
}

std::optional<client::connection> codex_children::connect() const {
  try {
    client::options settings;
    settings.socket = options_.daemon.socket;
    settings.call_timeout = std::chrono::milliseconds(10'000);
    settings.start = client::autostart_from_environment();
    return client::connection(settings);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

codex_children::child& codex_children::known(const std::string& parent, const std::string& id) {
  load(parent);
  const std::string base = id.substr(0, id.find('.'));
  const auto it = children_.find(base);
  if (it == children_.end() || it->second->parent != parent)
    throw std::invalid_argument("no subagent " + id + " in this Codex thread (subagent_list shows them)");
  return *it->second;
}

codex_started codex_children::spawn(const std::string& parent, const std::string& task, const std::string& title,
                                    const std::string& cwd, const std::string& model) {
  if (task.find_first_not_of(" \t\r\n") == std::string::npos) throw std::invalid_argument("`task` is empty");
  if (task.size() > max_prompt_bytes)
    throw std::invalid_argument("`task` is " + std::to_string(task.size()) + " bytes; at most " +
                                std::to_string(max_prompt_bytes) + ": put the details in a file and name it");
  if (title.size() > max_title_bytes) throw std::invalid_argument("`title` is over 1024 bytes");
  if (model.size() > 256 || model.find_first_of("\n\r\t ") != std::string::npos)
    throw std::invalid_argument("`model` must be one model name");
  if (options_.codex.empty())
    throw std::invalid_argument("handoff mcp cannot find the codex binary to run a subagent: set HANDOFF_CODEX");
  std::error_code ec;
  const fs::path dir = fs::absolute(cwd.empty() ? fs::current_path(ec) : fs::path(cwd), ec);
  if (ec || !fs::is_directory(dir, ec)) throw std::invalid_argument("`cwd` " + cwd + " is not a directory");

  lock held(mutex_);
  load(parent);
  std::string id;
  do id = new_child_id();
  while (children_.count(id) != 0);
  auto made = std::make_unique<child>();
  made->id = id;
  made->parent = parent;
  made->title = title.empty() ? first_line(task, 80) : valid_text(title);
  made->cwd = dir.lexically_normal().string();
  made->model = model;
  child& c = *made;
  children_.emplace(id, std::move(made));
  codex_started started = enqueue(held, c, task);
  save(parent);
  held.unlock();
  std::optional<client::connection> conn = connect();
  if (conn) {
    try {
      announce(parent, *conn);
    } catch (const std::exception&) {
      conn.reset();
    }
  }
  started.daemon_reachable = conn.has_value();
  return started;
}

codex_started codex_children::send(const std::string& parent, const std::string& id, const std::string& message) {
  if (message.find_first_not_of(" \t\r\n") == std::string::npos) throw std::invalid_argument("`message` is empty");
  if (message.size() > max_prompt_bytes)
    throw std::invalid_argument("`message` is over " + std::to_string(max_prompt_bytes) + " bytes");
  lock held(mutex_);
  child& c = known(parent, id);
  if (!c.turns.empty() && c.turns.back()->phase == "cancelled")
    throw std::invalid_argument("subagent " + c.id + " was cancelled; its conversation is closed");
  codex_started sent = enqueue(held, c, message);
  save(parent);
  held.unlock();
  std::optional<client::connection> conn = connect();
  if (conn) {
    try {
      announce(parent, *conn);
    } catch (const std::exception&) {
      conn.reset();
    }
  }
  sent.daemon_reachable = conn.has_value();
  return sent;
}

codex_started codex_children::enqueue(lock& held, child& c, std::string prompt) {
  auto made = std::make_unique<turn>();
  turn& t = *made;
  t.n = static_cast<int>(c.turns.size()) + 1;
  t.id = t.n == 1 ? c.id : c.id + "." + std::to_string(t.n);
  t.title = t.n == 1 ? c.title : c.title + " (turn " + std::to_string(t.n) + ")";
  t.prompt = std::move(prompt);
  t.owner = &c;
  const bool behind = std::any_of(c.turns.begin(), c.turns.end(), [](const std::unique_ptr<turn>& p) {
    return p->phase == "waiting" || p->phase == "queued" || p->phase == "running";
  });
  c.turns.push_back(std::move(made));
  codex_started out{c.id, c.title, t.n, t.id, t.title, behind, 0, true};
  if (behind) {
    t.phase = "waiting";
    return out;
  }
  t.phase = "queued";
  queue_.push_back(&t);
  start_ready(held);
  if (t.phase == "queued")
    out.queue_position =
        static_cast<std::size_t>(std::find(queue_.begin(), queue_.end(), &t) - queue_.begin()) + 1;
  return out;
}

void codex_children::start_ready(lock& held) {
  while (!stopping_ && running_ < options_.max_running && !queue_.empty()) {
    turn* next = queue_.front();
    queue_.erase(queue_.begin());
    start(held, *next);
  }
}

void codex_children::start(lock&, turn& t) {
  child& c = *t.owner;
  const fs::path dir = options_.state_dir / file_name(c.parent);
  std::error_code ec;
  fs::create_directories(dir, ec);
  ::chmod(dir.c_str(), 0700);
  const fs::path last = dir / (t.id + ".last");
  const fs::path err = dir / (t.id + ".err");
  fs::remove(last, ec);
  t.phase = "running";
  ++running_;
  watchers_.emplace_back([this, tp = &t, last, err] { watch(tp, last, err); });
}

void codex_children::watch(turn* t, fs::path last, fs::path err) {
  // The child is forked here, on the thread that lives as long as it does: PR_SET_PDEATHSIG
  // fires when the forking thread ends, not the process.
  std::vector<std::string> args;
  std::string cwd;
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    child& c = *t->owner;
    cwd = c.cwd;
    args = {options_.codex.string(), "exec"};
    if (t->n > 1 && !c.thread.empty()) args.insert(args.end(), {"resume", c.thread});
    args.insert(args.end(), {"--json", "--skip-git-repo-check", "-o", last.string(),
                             // The child must not start handoff's own server again.
                             "-c", "mcp_servers.handoff.enabled=false"});
    if (t->n == 1 && !c.model.empty()) args.insert(args.end(), {"-m", c.model});
    args.push_back(t->prompt);
    t->prompt.clear();
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  int out[2] = {-1, -1};
  if (err_fd < 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    if (err_fd >= 0) ::close(err_fd);
    finish(t, -1, last, err, false);
    return;
  }
  const pid_t parent_pid = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent_pid) ::_exit(127);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(err_fd, 2) < 0 || ::chdir(cwd.c_str()) != 0)
      ::_exit(126);
    ::execve(argv[0], argv.data(), environ);
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err_fd);
  if (pid < 0) {
    ::close(out[0]);
    finish(t, -1, last, err, false);
    return;
  }
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    t->pid = pid;
  }
  const steady::time_point deadline = steady::now() + options_.turn_timeout;
  std::optional<steady::time_point> killed_at;
  bool timed_out = false;
  std::string pending;
  bool open = true;
  int status = 0;
  bool reaped = false;
  while (!reaped) {
    pollfd p{out[0], POLLIN, 0};
    const int ready = open ? ::poll(&p, 1, 500) : (::usleep(100'000), 0);
    if (ready > 0) {
      char buf[65536];
      const ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0 && !(n < 0 && errno == EINTR)) {
        open = false;
      } else if (n > 0) {
        pending.append(buf, static_cast<std::size_t>(n));
        for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
          if (nl > max_event_line_bytes) continue;
          const json event = json::parse(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(nl), nullptr, false);
          if (!event.is_object()) continue;
          const std::string type = event.value("type", "");
          const std::lock_guard<std::mutex> hold(mutex_);
          if (type == "thread.started" && t->owner->thread.empty()) {
            t->owner->thread = event.value("thread_id", "");
            save(t->owner->parent);
          } else if (type == "item.completed" && event.contains("item") && event["item"].is_object()) {
            t->preview = tail_text(valid_text(activity_of(event["item"])), preview_bytes);
          }
        }
        if (pending.size() > max_event_line_bytes) pending.clear();
      }
    }
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      reaped = true;
      break;
    }
    const steady::time_point now = steady::now();
    if (!killed_at && now >= deadline) {
      timed_out = true;
      ::kill(-pid, SIGTERM);
      killed_at = now;
    } else if (killed_at && now >= *killed_at + kill_grace) {
      ::kill(-pid, SIGKILL);
    }
  }
  ::kill(-pid, SIGKILL);  // whatever the child left running in its group
  ::close(out[0]);
  finish(t, status, last, err, timed_out);
}

void codex_children::finish(turn* t, int wait_status, const fs::path& last, const fs::path& err, bool timed_out) {
  bool have_last = false;
  std::string text = read_file(last, max_final_bytes, have_last);
  bool have_err = false;
  const std::string err_text = read_file(err, 1 << 20, have_err);
  std::error_code ec;
  fs::remove(last, ec);
  fs::remove(err, ec);
  lock held(mutex_);
  t->pid = -1;
  --running_;
  if (t->phase != "cancelled") {
    t->phase = "finished";
    const bool ok = wait_status >= 0 && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0 && have_last;
    t->status = ok && !timed_out ? "done" : "error";
    if (t->status == "error") {
      std::string why = wait_status < 0 ? "codex exec could not be started: " + std::string(std::strerror(errno))
                        : timed_out ? "the turn ran past " + std::to_string(options_.turn_timeout.count()) +
                                          " s (HANDOFF_CODEX_TURN_TIMEOUT_S) and was stopped"
                                    : describe_exit(wait_status);
      const std::string tail = tail_text(valid_text(err_text), 1500);
      if (!tail.empty()) why += "; its stderr ends: " + tail;
      t->error = tail_text(why, 8000);
    }
    t->final_text = valid_text(text);
  }
  // The next turn of the same child, then whatever the queue holds.
  child& c = *t->owner;
  for (std::unique_ptr<turn>& next : c.turns)
    if (next->phase == "waiting") {
      next->phase = "queued";
      queue_.push_back(next.get());
      break;
    }
  start_ready(held);
  save(c.parent);
  held.unlock();
  wake_.notify_all();
}

rpc::completed_params codex_children::completion_of(const turn& t) {
  rpc::completed_params done;
  done.parent_id = t.owner->parent;
  done.child_id = t.id;
  done.title = t.title;
  done.status = t.status;
  done.error = t.error;
  done.final_text = t.final_text;
  return done;
}

bool codex_children::report(const rpc::completed_params& done, client::connection& c) {
  try {
    c.completed(done);
    return true;
  } catch (const client::client_error& e) {
    // A conflict means handoffd already holds a different text for it: nothing better to send.
    return e.kind() == client::error_kind::rpc && e.code() == rpc::errc::conflict;
  }
}

void codex_children::reported(turn& t) {
  if (t.reported) return;
  t.reported = true;
  t.final_text.clear();
  t.final_text.shrink_to_fit();
  save(t.owner->parent);
}

void codex_children::report_loop() {
  lock held(mutex_);
  while (!stopping_) {
    std::vector<turn*> due;
    for (auto& [id, c] : children_)
      for (std::unique_ptr<turn>& t : c->turns)
        if (t->phase == "finished" && !t->reported) due.push_back(t.get());
    if (!due.empty()) {
      held.unlock();
      std::optional<client::connection> conn = connect();
      held.lock();
      for (turn* t : due) {
        if (!conn || stopping_) break;
        if (t->reported) continue;
        const rpc::completed_params done = completion_of(*t);
        held.unlock();
        const bool ok = report(done, *conn);
        held.lock();
        if (ok) {
          reported(*t);
        } else {
          conn.reset();
        }
      }
    }
    wake_.wait_for(held, std::chrono::seconds(2));
  }
}

void codex_children::announce(const std::string& parent, client::connection& c) {
  std::vector<std::pair<std::string, std::string>> running;
  std::vector<std::pair<turn*, rpc::completed_params>> unreported;
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    for (auto& [id, ch] : children_)
      if (ch->parent == parent)
        for (std::unique_ptr<turn>& t : ch->turns) {
          if (t->phase != "finished" && t->phase != "cancelled") running.emplace_back(t->id, t->title);
          if (t->phase == "finished" && !t->reported) unreported.emplace_back(t.get(), completion_of(*t));
        }
  }
  for (const auto& [id, title] : running) {
    rpc::started_params s;
    s.parent_id = parent;
    s.child_id = id;
    s.title = title;
    c.started(s);
  }
  // Those the report loop has not landed yet, so the wait that follows finds them completed.
  for (const auto& [t, done] : unreported) {
    if (!report(done, c)) continue;
    const std::lock_guard<std::mutex> hold(mutex_);
    reported(*t);
  }
}

std::vector<std::string> codex_children::wait_ids(const std::string& parent, const std::vector<std::string>& ids) {
  lock held(mutex_);
  load(parent);
  std::vector<std::string> out;
  const auto add = [&out](const std::string& id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  };
  if (ids.empty()) {
    for (auto& [id, c] : children_)
      if (c->parent == parent)
        for (std::unique_ptr<turn>& t : c->turns)
          if (!t->received && t->phase != "cancelled") add(t->id);
    return out;
  }
  for (const std::string& id : ids) {
    child& c = known(parent, id);
    if (id.find('.') != std::string::npos) {
      if (std::none_of(c.turns.begin(), c.turns.end(), [&id](const std::unique_ptr<turn>& t) { return t->id == id; }))
        throw std::invalid_argument("subagent " + c.id + " has no turn " + id);
      add(id);
      continue;
    }
    bool any = false;
    for (std::unique_ptr<turn>& t : c.turns)
      if (!t->received && t->phase != "cancelled") {
        add(t->id);
        any = true;
      }
    if (!any && !c.turns.empty()) add(c.turns.back()->id);
  }
  return out;
}

void codex_children::mark_received(const std::string& parent, const std::vector<std::string>& turn_ids) {
  lock held(mutex_);
  for (auto& [id, c] : children_)
    if (c->parent == parent)
      for (std::unique_ptr<turn>& t : c->turns)
        if (std::find(turn_ids.begin(), turn_ids.end(), t->id) != turn_ids.end()) t->received = true;
  save(parent);
}

std::optional<codex_turn_view> codex_children::view(const std::string& parent, const std::string& id) {
  lock held(mutex_);
  child& c = known(parent, id);
  const struct turn* t = c.turns.empty() ? nullptr : c.turns.back().get();
  for (const std::unique_ptr<struct turn>& each : c.turns)
    if (each->id == id) t = each.get();
  if (t == nullptr) return std::nullopt;
  return codex_turn_view{t->id, t->title, t->phase, t->status, t->preview};
}

codex_children::cancelled codex_children::cancel(const std::string& parent, const std::string& id) {
  lock held(mutex_);
  child& c = known(parent, id);
  cancelled out;
  out.was = c.turns.empty() ? "finished" : c.turns.back()->phase;
  for (std::unique_ptr<struct turn>& t : c.turns) {
    out.turn_ids.push_back(t->id);
    if (t->phase == "running") {
      out.was = "running";
      if (t->pid > 0) ::kill(-t->pid, SIGTERM);
    }
    if (t->phase == "queued") queue_.erase(std::remove(queue_.begin(), queue_.end(), t.get()), queue_.end());
    if (t->phase != "finished") {
      t->phase = "cancelled";
      t->reported = true;
    }
    t->received = true;
  }
  save(parent);
  return out;
}

std::string codex_children::list(const std::string& parent) {
  lock held(mutex_);
  load(parent);
  std::string out;
  std::size_t count = 0;
  std::size_t shown = 0;
  for (auto& [id, c] : children_) {
    if (c->parent != parent || c->turns.empty()) continue;
    ++count;
    const struct turn& t = *c->turns.back();
    std::string state = t.phase == "finished" ? (t.received ? "delivered" : "completed") : t.phase;
    if (t.phase == "finished" && t.status == "error") state += " (error)";
    std::string line = c->id + " \"" + first_line(c->title, 60) + "\": " + state;
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

void codex_children::shutdown() {
  std::vector<std::pair<std::string, std::vector<std::string>>> to_cancel;
  {
    lock held(mutex_);
    std::map<std::string, std::vector<std::string>> by_parent;
    for (auto& [id, c] : children_)
      for (std::unique_ptr<struct turn>& t : c->turns)
        if (t->phase == "running" || t->phase == "queued" || t->phase == "waiting") {
          if (t->pid > 0) ::kill(-t->pid, SIGTERM);
          t->phase = "cancelled";
          t->reported = true;
          by_parent[c->parent].push_back(t->id);
        }
    queue_.clear();
    for (auto& [parent, ids] : by_parent) {
      save(parent);
      to_cancel.emplace_back(parent, ids);
    }
  }
  if (to_cancel.empty()) return;
  std::optional<client::connection> conn = connect();
  if (!conn) return;
  for (auto& [parent, ids] : to_cancel) {
    try {
      rpc::cancel_params p;
      p.parent_id = parent;
      p.child_ids = ids;
      conn->cancel(p);
    } catch (const std::exception&) {
      // handoffd forgets them with the rest when it can
    }
  }
}

void codex_children::load(const std::string& parent) {
  if (!loaded_.insert(parent).second) return;
  bool ok = false;
  const std::string text = read_file(options_.state_dir / (file_name(parent) + ".json"), 16 << 20, ok);
  if (!ok) return;
  const json state = json::parse(text, nullptr, false);
  if (!state.is_object() || !state.contains("children") || !state["children"].is_array()) return;
  for (const json& saved : state["children"]) {
    if (!saved.is_object()) continue;
    auto c = std::make_unique<child>();
    c->id = saved.value("id", "");
    if (c->id.empty() || children_.count(c->id) != 0) continue;
    c->parent = parent;
    c->title = saved.value("title", "");
    c->cwd = saved.value("cwd", "");
    c->model = saved.value("model", "");
    c->thread = saved.value("thread", "");
    for (const json& st : saved.value("turns", json::array())) {
      if (!st.is_object()) continue;
      auto t = std::make_unique<struct turn>();
      t->id = st.value("id", "");
      t->n = st.value("n", 1);
      t->title = st.value("title", "");
      t->owner = c.get();
      t->phase = st.value("phase", "finished");
      t->status = st.value("status", "");
      t->received = st.value("received", false);
      t->reported = st.value("reported", true);
      if (t->phase != "finished" && t->phase != "cancelled") {
        // Its server died with it (PR_SET_PDEATHSIG): say so as its result.
        t->phase = "finished";
        t->status = "error";
        t->error = "the handoff mcp server running this subagent exited before it finished";
        t->reported = false;
      } else if (t->phase == "finished" && !t->reported) {
        t->status = "error";
        t->error = "its answer was lost: the handoff mcp server exited before handoffd took it";
      }
      c->turns.push_back(std::move(t));
    }
    children_.emplace(c->id, std::move(c));
  }
  wake_.notify_all();
}

void codex_children::save(const std::string& parent) {
  json list = json::array();
  for (auto& [id, c] : children_) {
    if (c->parent != parent) continue;
    json turns = json::array();
    for (std::unique_ptr<struct turn>& t : c->turns)
      turns.push_back({{"id", t->id}, {"n", t->n}, {"title", t->title}, {"phase", t->phase}, {"status", t->status},
                       {"received", t->received}, {"reported", t->reported}});
    list.push_back({{"id", c->id}, {"title", c->title}, {"cwd", c->cwd}, {"model", c->model}, {"thread", c->thread},
                    {"turns", std::move(turns)}});
  }
  std::error_code ec;
  fs::create_directories(options_.state_dir, ec);
  ::chmod(options_.state_dir.c_str(), 0700);
  const fs::path target = options_.state_dir / (file_name(parent) + ".json");
  const fs::path temp = target.string() + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  const std::string text = json{{"children", std::move(list)}}.dump();
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (written) ::rename(temp.c_str(), target.c_str());
}

}  // namespace handoff::cli::codex
