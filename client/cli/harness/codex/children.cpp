#include "cli/harness/codex/children.hpp"

#include <algorithm>
#include <stdexcept>
#include <system_error>

#include "cli/harness/codex/child_text.hpp"
#include "cli/harness/codex/codex_exec.hpp"
#include "cli/harness/codex/exec_events.hpp"
#include "cli/harness/codex/state_file.hpp"
#include "cli/harness/codex/turn_outcome.hpp"

namespace handoff::cli::codex {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t max_prompt_bytes = 100 * 1024;  // one argv string stays under Linux's 128 KiB
constexpr std::size_t max_title_bytes = 1024;
constexpr std::size_t default_title_bytes = 80;       // of the task's first line
constexpr std::size_t max_model_bytes = 256;

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

}  // namespace

children::children(children_options options)
    : options_(std::move(options)),
      scheduler_(options_.max_running),
      reporter_(options_.daemon, [this] { return due(); }, [this](const std::string& id) { taken(id); }) {}

children::~children() {
  shutdown();
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    stopping_ = true;
  }
  threads_.join_all();  // the turns shutdown() killed end, and report to reporter_ as they do
  reporter_.stop();
}

child& children::known(const std::string& parent, const std::string& id) {
  load(parent);
  const auto it = children_.find(id.substr(0, id.find('.')));
  if (it == children_.end() || it->second->parent != parent)
    throw std::invalid_argument("no subagent " + id + " in this Codex thread (subagent_list shows them)");
  return *it->second;
}

std::vector<const child*> children::of(const std::string& parent) const {
  std::vector<const child*> out;
  for (const auto& [id, c] : children_)
    if (c->parent == parent) out.push_back(c.get());
  return out;
}

void children::load(const std::string& parent) {
  if (!loaded_.insert(parent).second) return;
  for (std::unique_ptr<child>& c : load_children(options_.state_dir, parent))
    if (children_.count(c->id) == 0) children_.emplace(c->id, std::move(c));
  reporter_.wake();  // turns it found unreported
}

void children::save(const std::string& parent) { save_children(options_.state_dir, parent, of(parent)); }

started children::spawn(const std::string& parent, const std::string& task, const std::string& title,
                        const std::string& cwd, const std::string& model) {
  if (blank(task)) throw std::invalid_argument("`task` is empty");
  if (task.size() > max_prompt_bytes)
    throw std::invalid_argument("`task` is " + std::to_string(task.size()) + " bytes; at most " +
                                std::to_string(max_prompt_bytes) + ": put the details in a file and name it");
  if (title.size() > max_title_bytes) throw std::invalid_argument("`title` is over 1024 bytes");
  if (model.size() > max_model_bytes || model.find_first_of("\n\r\t ") != std::string::npos)
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
  made->title = title.empty() ? first_line(task, default_title_bytes) : valid_text(title);
  made->cwd = dir.lexically_normal().string();
  made->model = model;
  child& c = *made;
  children_.emplace(id, std::move(made));
  started s = enqueue(c, task);
  held.unlock();
  s.daemon_reachable = announce_now(parent);
  return s;
}

started children::send(const std::string& parent, const std::string& id, const std::string& message) {
  if (blank(message)) throw std::invalid_argument("`message` is empty");
  if (message.size() > max_prompt_bytes)
    throw std::invalid_argument("`message` is over " + std::to_string(max_prompt_bytes) + " bytes");
  lock held(mutex_);
  child& c = known(parent, id);
  if (!c.turns.empty() && c.turns.back()->phase == phase::cancelled)
    throw std::invalid_argument("subagent " + c.id + " was cancelled; its conversation is closed");
  started s = enqueue(c, message);
  held.unlock();
  s.daemon_reachable = announce_now(parent);
  return s;
}

bool children::announce_now(const std::string& parent) {
  std::optional<client::connection> conn = connect_to_handoffd(options_.daemon, report_call_timeout);
  if (!conn) return false;
  try {
    announce(parent, *conn);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// With mutex_ held: the new turn of `c`, placed and (when a slot is free) started; saved.
started children::enqueue(child& c, std::string prompt) {
  auto made = std::make_unique<turn>();
  turn& t = *made;
  t.n = static_cast<int>(c.turns.size()) + 1;
  t.id = t.n == 1 ? c.id : c.id + "." + std::to_string(t.n);
  t.title = t.n == 1 ? c.title : c.title + " (turn " + std::to_string(t.n) + ")";
  t.prompt = std::move(prompt);
  t.owner = &c;
  const bool behind = c.busy();
  c.turns.push_back(std::move(made));
  scheduler_.admit(t, behind);
  start_ready();
  save(c.parent);
  return started{c.id, c.title, t.n, t.id, t.title, behind, scheduler_.position(t), true};
}

// With mutex_ held: every turn the scheduler lets start gets its files' place and its thread.
void children::start_ready() {
  if (stopping_) return;
  for (turn* t : scheduler_.ready())
    threads_.run([this, t, files = prepare_turn_files(options_.state_dir, t->owner->parent, t->id)] { run(t, files); });
}

void children::run(turn* t, const turn_files& files) {
  exec_plan plan;
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    plan.argv = exec_argv(options_.codex, *t, files.last);
    plan.cwd = t->owner->cwd;
    t->prompt.clear();
  }
  plan.stderr_file = files.err;
  plan.timeout = options_.turn_timeout;
  const exec_outcome outcome = run_codex_exec(
      plan,
      [this, t](pid_t pid) {
        const std::lock_guard<std::mutex> hold(mutex_);
        t->pid = pid;
      },
      [this, t](std::string_view line) {
        const std::optional<exec_event> event = read_exec_event(line);
        if (!event) return;
        const std::lock_guard<std::mutex> hold(mutex_);
        if (!event->thread_id.empty() && t->owner->thread.empty()) {
          t->owner->thread = event->thread_id;
          save(t->owner->parent);
        }
        if (event->activity) t->preview = *event->activity;
      });
  turn_result result = collect_result(outcome, files, options_.turn_timeout);

  const std::lock_guard<std::mutex> hold(mutex_);
  t->pid = -1;
  if (t->phase != phase::cancelled) {
    t->phase = phase::finished;
    t->status = std::move(result.status);
    t->error = std::move(result.error);
    t->final_text = std::move(result.final_text);
  }
  scheduler_.ended(*t);  // the child's next turn, then whatever the queue holds
  start_ready();
  save(t->owner->parent);
  reporter_.wake();
  ended_.notify_all();
}

std::vector<rpc::completed_params> children::due() {
  const std::lock_guard<std::mutex> hold(mutex_);
  std::vector<rpc::completed_params> out;
  for (auto& [id, c] : children_)
    for (const std::unique_ptr<turn>& t : c->turns)
      if (t->phase == phase::finished && !t->reported) out.push_back(completion_of(*t));
  return out;
}

void children::taken(const std::string& turn_id) {
  const std::lock_guard<std::mutex> hold(mutex_);
  const auto it = children_.find(turn_id.substr(0, turn_id.find('.')));
  if (it == children_.end()) return;
  for (const std::unique_ptr<turn>& t : it->second->turns)
    if (t->id == turn_id && !t->reported) {
      t->reported = true;
      t->final_text.clear();
      t->final_text.shrink_to_fit();
      save(t->owner->parent);
    }
}

void children::announce(const std::string& parent, client::connection& c) {
  std::vector<rpc::started_params> unfinished;
  std::vector<rpc::completed_params> unreported;
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    for (const child* ch : of(parent))
      for (const std::unique_ptr<turn>& t : ch->turns) {
        if (t->phase != phase::finished && t->phase != phase::cancelled) {
          rpc::started_params s;
          s.parent_id = parent;
          s.child_id = t->id;
          s.title = t->title;
          unfinished.push_back(std::move(s));
        }
        if (t->phase == phase::finished && !t->reported) unreported.push_back(completion_of(*t));
      }
  }
  for (const rpc::started_params& s : unfinished) c.started(s);
  // Those the reporter has not landed yet, so the wait that follows finds them completed.
  for (const rpc::completed_params& done : unreported)
    if (send_completion(done, c)) taken(done.child_id);
}

std::vector<std::string> children::wait_ids(const std::string& parent, const std::vector<std::string>& ids) {
  const std::lock_guard<std::mutex> hold(mutex_);
  load(parent);
  return waited_turns(of(parent), ids, [&](const std::string& id) -> const child& { return known(parent, id); });
}

std::vector<children::held_turn> children::await_ended(const std::string& parent,
                                                   const std::vector<std::string>& turn_ids,
                                                   std::optional<std::chrono::steady_clock::time_point> until,
                                                   const client::cancel_signal& cancel) {
  // cancel_signal has no way to wake a condition variable: look again at least this often.
  constexpr std::chrono::milliseconds cancel_look{200};
  lock hold(mutex_);
  load(parent);
  const auto covered = [&](const turn& t) {
    return std::find(turn_ids.begin(), turn_ids.end(), t.id) != turn_ids.end();
  };
  const auto all_ended = [&] {
    for (const child* c : of(parent))
      for (const std::unique_ptr<turn>& t : c->turns)
        if (covered(*t) && t->phase != phase::finished && t->phase != phase::cancelled) return false;
    return true;
  };
  while (!all_ended() && !cancel.raised() && !stopping_) {
    auto next = std::chrono::steady_clock::now() + cancel_look;
    if (until) {
      if (std::chrono::steady_clock::now() >= *until) break;
      next = std::min(next, *until);
    }
    ended_.wait_until(hold, next);
  }
  std::vector<held_turn> out;
  for (const child* c : of(parent))
    for (const std::unique_ptr<turn>& t : c->turns)
      if (covered(*t))
        out.push_back(held_turn{t->id, t->title, t->phase, t->status, t->error, t->final_text, t->reported});
  return out;
}

void children::mark_received(const std::string& parent, const std::vector<std::string>& turn_ids) {
  const std::lock_guard<std::mutex> hold(mutex_);
  for (const child* c : of(parent))
    for (const std::unique_ptr<turn>& t : c->turns)
      if (std::find(turn_ids.begin(), turn_ids.end(), t->id) != turn_ids.end()) t->received = true;
  save(parent);
}

std::optional<turn_view> children::view(const std::string& parent, const std::string& id) {
  const std::lock_guard<std::mutex> hold(mutex_);
  return view_of(known(parent, id), id);
}

std::string children::list(const std::string& parent) {
  const std::lock_guard<std::mutex> hold(mutex_);
  load(parent);
  return list_text(of(parent));
}

children::cancelled children::cancel(const std::string& parent, const std::string& id) {
  const std::lock_guard<std::mutex> hold(mutex_);
  child& c = known(parent, id);
  cancelled out;
  out.was = c.turns.empty() ? "finished" : std::string(phase_name(c.turns.back()->phase));
  for (const std::unique_ptr<turn>& t : c.turns) {
    out.turn_ids.push_back(t->id);
    if (t->phase == phase::running) out.was = "running";
    scheduler_.cancel(*t);
    t->received = true;
  }
  save(parent);
  ended_.notify_all();
  return out;
}

void children::shutdown() {
  std::map<std::string, std::vector<std::string>> by_parent;  // the turns to cancel in handoffd
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    for (auto& [id, c] : children_)
      for (const std::unique_ptr<turn>& t : c->turns)
        if (scheduler_.cancel(*t)) by_parent[c->parent].push_back(t->id);
    scheduler_.clear();
    for (const auto& [parent, ids] : by_parent) save(parent);
  }
  ended_.notify_all();
  if (by_parent.empty()) return;
  std::optional<client::connection> conn = connect_to_handoffd(options_.daemon, report_call_timeout);
  if (!conn) return;
  for (const auto& [parent, ids] : by_parent) {
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

}  // namespace handoff::cli::codex
