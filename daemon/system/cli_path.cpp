#include "system/cli_path.hpp"

#include <filesystem>
#include <stdexcept>
#include <unistd.h>

#include "protocol/default_paths.hpp"

namespace handoff::daemon {
namespace {

bool executable_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::string default_cli_path() {
  const std::filesystem::path self = rpc::own_executable();
  if (self.empty()) return bare_cli_name;
  const std::filesystem::path dir = self.parent_path();
  for (const std::filesystem::path& candidate : {dir / "handoff", dir / ".." / "client" / "handoff"}) {
    if (executable_file(candidate)) return candidate.lexically_normal().string();
  }
  return bare_cli_name;
}

void check_cli_path(const std::string& path) {
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument("--cli-path '" + path + "': " + why);
  };
  if (path.empty() || path.front() != '/') fail("must be an absolute path");
  if (path.size() > max_cli_path_bytes) fail("must be at most " + std::to_string(max_cli_path_bytes) + " bytes");
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    // The footer single-quotes it inside a `...` span the model copies into bash.
    if (byte < 0x20U || byte == 0x7FU || c == '\'' || c == '"' || c == '`' || c == '\\')
      fail("must not hold control characters, quotes, backquotes or backslashes");
  }
  if (!executable_file(path)) fail("is not an executable file");
}

}  // namespace handoff::daemon
