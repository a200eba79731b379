// One request or notification as its frame brought it, before any method looked at its params:
// read as text when it is written as clients write it (read_request_text: no json built), else
// parsed (parse_message). The dispatcher routes it by its method once; the method's decoder
// then reads the params from the text where its typed reader takes them, or asks for the parsed
// message, which parses the frame at that moment (once).
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "protocol/jsonrpc.hpp"

namespace handoff::rpc {

class incoming {
 public:
  // A frame read_request_text took; `frame` must outlive this.
  incoming(std::string_view frame, const request_text& text, parse_limits limits) noexcept;
  // A request or notification parse_message returned.
  explicit incoming(message parsed) noexcept;

  // The id a reply goes to: null for a notification, and after a parse error that could not
  // determine it.
  const json& id() const noexcept { return id_; }
  std::string_view method() const noexcept { return parsed_ ? std::string_view(parsed_->method) : text_->method; }
  bool is_notification() const noexcept { return parsed_ && parsed_->type == message::kind::notification; }
  // The params' JSON text (empty when there are none) while the frame has not been parsed.
  std::optional<std::string_view> params_text() const noexcept {
    return parsed_ ? std::nullopt : std::optional<std::string_view>(text_->params);
  }

  // The message, parsed from the frame the first time when it was read as text. Throws rpc_error
  // as parse_message does, without data: id() is then the id that error is answered to. A frame
  // whose "id" or "method" appears again after its params (the last one wins in JSON, but the
  // text was routed by the first) is refused as invalid_request, to the last id.
  message& parsed();

 private:
  std::string_view frame_;
  parse_limits limits_;
  std::optional<request_text> text_;
  std::optional<message> parsed_;
  json id_;
};

}  // namespace handoff::rpc
