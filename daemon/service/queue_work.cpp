// The service's calls on the durable queue that nobody's reply waits for, or that only look
// something up: on the worker pool, never blocking the I/O thread.
#include <asio/post.hpp>
#include <spdlog/spdlog.h>

#include "runtime/offload.hpp"
#include "service.hpp"

namespace handoff::daemon {

void service::consume_in_background(std::vector<std::uint64_t> seqs, std::vector<std::string> artifacts) {
  queue_changes_.add();
  asio::post(pool_, [this, seqs = std::move(seqs), artifacts = std::move(artifacts)] {
    const auto consume = [&] {
      if (const std::vector<std::string> problems = store_.sync(artifacts); !problems.empty()) {
        // The journal keeps the texts, so recovery can mend these artifacts after a power loss.
        for (const auto& problem : problems)
          spdlog::warn("an artifact a wait named is not durable, its results stay queued: {}", problem);
        return;
      }
      // What the disk refused stays on disk and is delivered again after a restart: say so.
      for (const auto& problem : queue_.consume(seqs))
        spdlog::warn("consumed results not removed from the queue: {}", problem);
    };
    try {
      consume();
    } catch (const std::exception& e) {
      spdlog::error("could not remove consumed results from the queue: {}", e.what());
    }
    // The next answer's artifact is written into a file made now, off that answer's path.
    if (!artifacts.empty()) store_.keep_spare();
    asio::post(io_, [this] { queue_changes_.done(); });
  });
}

asio::awaitable<void> service::removals_settled() {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);  // a named local (g++ 12)
  co_await queue_changes_.zero(give_up);
}

asio::awaitable<bool> service::delivered_before(const std::string& parent_id, const std::string& child_id) {
  auto look = [this, &parent_id, &child_id] { return queue_.was_delivered(parent_id, child_id); };
  co_return co_await offload(pool_, look);
}

}  // namespace handoff::daemon
