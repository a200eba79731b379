// Parsing of untrusted JSON text with a nesting cap that holds while parsing: a deep document
// is refused at its (max_depth + 1)-th open bracket, before anything deeper is built.
//
// Why not nlohmann's parser callback: its DOM callback parser rescans the parent container at
// every closing bracket, which is quadratic ("[{},{},...]" of 1 MB takes about a minute). This
// is a plain SAX handler that builds the same DOM in linear time.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

namespace handoff::rpc {

// Parses one JSON text (RFC 8259: no comments, no trailing bytes, strings valid UTF-8).
// Throws rpc_error{errc::parse_error} with a short message saying what and at which byte; the
// message never quotes the input. Duplicate object keys: the last one wins, as in nlohmann.
nlohmann::json parse_json(std::string_view text, std::size_t max_depth);

}  // namespace handoff::rpc
