// Parsing of untrusted JSON text with a nesting cap that holds while parsing: a deep document
// is refused at its (max_depth + 1)-th open bracket, before anything deeper is built.
//
// Why not nlohmann's parser callback: its DOM callback parser rescans the parent container at
// every closing bracket, which is quadratic ("[{},{},...]" of 1 MB takes about a minute). This
// is a plain SAX handler that builds the same DOM in linear time.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

namespace handoff::rpc {

// Why a text is not a document parse_json accepts: not JSON, not valid UTF-8, or nested deeper
// than the cap. what() says which and at which byte, and never quotes the input. The parser
// knows no JSON-RPC: parse_message (jsonrpc.hpp) is the one place that turns this into -32700.
struct json_parse_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses one JSON text (RFC 8259: no comments, no trailing bytes, strings valid UTF-8).
// Throws json_parse_error. Duplicate object keys: the last one wins, as in nlohmann.
nlohmann::json parse_json(std::string_view text, std::size_t max_depth);

}  // namespace handoff::rpc
