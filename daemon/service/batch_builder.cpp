#include "batch_builder.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "runtime/offload.hpp"

namespace handoff::daemon {

void batch_builder::note_artifact_copied(const artifact_ref& artifact) {
  if (!artifact_copy_noted_.exchange(true))
    spdlog::info("artifact {} written as a copy, not linked from the queue: {} (further copies are logged at debug "
                 "level)",
                 artifact.sha256, artifact.link_error);
  else
    spdlog::debug("artifact {} written as a copy, not linked from the queue: {}", artifact.sha256, artifact.link_error);
}

batch_options batch_builder::options_for(const surface_caps& caps) const {
  batch_options options;
  options.caps = caps;
  options.head_share = cfg_.head_share;
  options.policy = cfg_.policy;
  options.reader = cfg_.cli_path;
  return options;
}

asio::awaitable<batch_builder::built_batch> batch_builder::build(std::vector<held_result> results_param,
                                                                  batch_options options_param,
                                                                  std::vector<held_result> companions_param) {
  // Parameters copied into locals before any lambda touches them (see offload.hpp).
  const std::vector<held_result> results = std::move(results_param);
  const std::vector<held_result> companions = std::move(companions_param);
  const batch_options options = options_param;
  auto work = [this, &results, &companions, &options] {
    // One list in completion order: the results to project and the companions beside them.
    struct entry {
      const held_result* result;
      bool companion;
    };
    std::vector<entry> order;
    order.reserve(results.size() + companions.size());
    for (const auto& r : results) order.push_back({&r, false});
    for (const auto& r : companions) order.push_back({&r, true});
    std::stable_sort(order.begin(), order.end(), [](const entry& a, const entry& b) { return a.result->seq < b.result->seq; });
    std::vector<mapped_file> texts;
    std::vector<batch_input> inputs;
    texts.reserve(results.size());
    inputs.reserve(order.size());
    for (const auto& [r, companion] : order) {
      if (companion) {
        batch_input in{r->info.child_id, r->info.title, r->info.status, r->info.error, {}, r->sha256, std::nullopt, r->shape};
        in.companion = true;
        inputs.push_back(std::move(in));
        continue;
      }
      texts.push_back(queue_.open_text(*r));
      inputs.push_back(batch_input{r->info.child_id, r->info.title, r->info.status, r->info.error,
                                   texts.back().view(), r->sha256, queue_.linkable_text(*r), r->shape});  // a large text's artifact links the queue's file
    }
    built_batch out{build_batch(inputs, options, &store_), {}};
    for (const auto& s : out.b.sections) {
      out.admitted_seqs.push_back(order[s.input_index].result->seq);
      if (s.artifact && !s.artifact->link_error.empty()) note_artifact_copied(*s.artifact);
    }
    return out;
  };
  co_return co_await offload(pool_, work);
}

}  // namespace handoff::daemon
