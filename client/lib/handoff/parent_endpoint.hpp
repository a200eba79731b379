// A parent's endpoint: the connection through which handoffd asks the parent for its context
// usage (context/usage) and hands it auto-delivered batches (parent/deliver).
//
//   handoff::client::connection c;
//   handoff::client::parent_callbacks on;
//   on.usage = [] { return std::optional<handoff::rpc::usage_dto>(); };  // unknown
//   on.deliver = [](const handoff::rpc::deliver_params& d) { show(d.batch.text); };
//   handoff::client::parent_endpoint parent(c, "session-42", on);
//   parent.report_idle();
//   for (;;) c.serve_one(std::nullopt);
//
// Callbacks run on the thread that reads the connection: in serve_one(), or inside any call
// made on it when a request arrives meanwhile.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "handoff/connection.hpp"
#include "protocol/messages.hpp"

namespace handoff::client {

struct parent_callbacks {
  // context/usage: the parent's usage now, or nullopt when unknown (sent as null; the daemon then
  // keeps to its static caps). Unset: always unknown. Throwing counts as unknown too.
  std::function<std::optional<rpc::usage_dto>()> usage;
  // parent/deliver: one batch for the parent. Returning normally acknowledges it, and only then
  // does the daemon drop its results. Throwing answers with a JSON-RPC error instead: the batch
  // stays queued and comes again, with the same deliveryId, on the next idle or reconnect. A
  // batch may therefore arrive twice (say, the acknowledgement was lost): compare deliveryId.
  std::function<void(const rpc::deliver_params&)> deliver;
};

class parent_endpoint {
 public:
  // Installs the callbacks on `c`, then registers `c` as `parent_id`'s endpoint (initialize with
  // parentId). The daemon answers first and then resends any delivery never acknowledged.
  // `c` must outlive this object; the destructor removes the callbacks.
  parent_endpoint(connection& c, std::string parent_id, parent_callbacks callbacks,
                  std::string client_name = "handoff-cpp");
  ~parent_endpoint();
  parent_endpoint(const parent_endpoint&) = delete;
  parent_endpoint& operator=(const parent_endpoint&) = delete;

  // parent/state: idle lets the daemon deliver what is pending; busy holds deliveries back.
  void report_idle();
  void report_busy();

  const std::string& parent_id() const noexcept { return parent_id_; }
  // The daemon's answer to the registration (artifact dir, limits).
  const rpc::initialize_result& registration() const noexcept { return registration_; }
  // Deliveries acknowledged (the deliver callback returned) and refused (it threw) so far.
  std::size_t deliveries_acknowledged() const noexcept { return acknowledged_; }
  std::size_t deliveries_refused() const noexcept { return refused_; }

 private:
  nlohmann::json answer_usage(const nlohmann::json& params);
  nlohmann::json answer_deliver(const nlohmann::json& params);

  connection& connection_;
  std::string parent_id_;
  parent_callbacks callbacks_;
  rpc::initialize_result registration_;
  std::size_t acknowledged_ = 0;
  std::size_t refused_ = 0;
};

}  // namespace handoff::client
