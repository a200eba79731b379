#include "protocol/incoming.hpp"

#include <string>
#include <utility>

namespace handoff::rpc {

incoming::incoming(std::string_view frame, const request_text& text, parse_limits limits) noexcept
    : frame_(frame), limits_(limits), text_(text), id_(text.id) {}

incoming::incoming(message parsed) noexcept : parsed_(std::move(parsed)) { id_ = parsed_->id; }

message& incoming::parsed() {
  if (parsed_) return *parsed_;
  message m;
  try {
    m = parse_message(frame_, limits_);
  } catch (const rpc_error& e) {
    id_ = e.data.is_object() && e.data.contains("id") ? e.data["id"] : json();
    throw rpc_error(e.code, e.what());
  }
  if (m.method != text_->method || m.id != id_) {
    id_ = m.id;
    throw rpc_error(errc::invalid_request, "\"id\" and \"method\" must each appear once in a request");
  }
  parsed_ = std::move(m);
  return *parsed_;
}

}  // namespace handoff::rpc
