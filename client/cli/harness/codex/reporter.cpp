#include "cli/harness/codex/reporter.hpp"

#include <chrono>

namespace handoff::cli::codex {

std::optional<client::connection> connect_to_handoffd(const daemon_options& daemon,
                                                      std::optional<std::chrono::milliseconds> call_timeout,
                                                      std::string* why) {
  try {
    client::options settings;
    settings.socket = daemon.socket;
    if (call_timeout) settings.call_timeout = *call_timeout;
    settings.start = client::autostart_from_environment();
    return client::connection(settings);
  } catch (const std::exception& e) {
    if (why != nullptr) *why = e.what();
    return std::nullopt;
  }
}

rpc::completed_params completion_of(const turn& t) {
  rpc::completed_params done;
  done.parent_id = t.owner->parent;
  done.child_id = t.id;
  done.title = t.title;
  done.status = t.status;
  done.error = t.error;
  done.final_text = t.final_text;
  return done;
}

bool send_completion(const rpc::completed_params& done, client::connection& c) {
  try {
    c.completed(done);
    return true;
  } catch (const client::client_error& e) {
    // A conflict means handoffd already holds a different text for it: nothing better to send.
    return e.kind() == client::error_kind::rpc && e.code() == rpc::errc::conflict;
  }
}

reporter::reporter(daemon_options daemon, due_fn due, taken_fn taken)
    : daemon_(std::move(daemon)), due_(std::move(due)), taken_(std::move(taken)), thread_([this] { loop(); }) {}

reporter::~reporter() { stop(); }

void reporter::wake() {
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    pending_ = true;
  }
  woken_.notify_all();
}

void reporter::stop() {
  {
    const std::lock_guard<std::mutex> hold(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  woken_.notify_all();
  thread_.join();
}

bool reporter::stopping() {
  const std::lock_guard<std::mutex> hold(mutex_);
  return stopping_;
}

void reporter::loop() {
  std::unique_lock<std::mutex> held(mutex_);
  while (!stopping_) {
    pending_ = false;
    held.unlock();
    const std::vector<rpc::completed_params> due = due_();
    if (!due.empty()) {
      std::optional<client::connection> conn = connect_to_handoffd(daemon_, report_call_timeout);
      for (const rpc::completed_params& done : due) {
        if (!conn || stopping() || !send_completion(done, *conn)) break;  // the next round tries again
        taken_(done.child_id);
      }
    }
    held.lock();
    woken_.wait_for(held, std::chrono::seconds(2), [this] { return pending_ || stopping_; });
  }
}

}  // namespace handoff::cli::codex
