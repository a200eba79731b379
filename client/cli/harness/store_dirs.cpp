#include "cli/harness/store_dirs.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "protocol/default_paths.hpp"

namespace handoff::cli {
namespace {

namespace fs = std::filesystem;

// `dir` as a rule names it: absolute, lexically normal, no trailing '/'.
std::string rule_path(const fs::path& dir) {
  std::string s = fs::absolute(dir).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

void add_once(std::vector<std::string>& to, std::string dir) {
  if (std::find(to.begin(), to.end(), dir) == to.end()) to.push_back(std::move(dir));
}

}  // namespace

std::optional<store_dirs> stores_to_allow(const std::string& named) {
  store_dirs out;
  const fs::path fallback = rpc::default_artifact_dir();
  const fs::path former = rpc::legacy_artifact_dir();
  if (!named.empty()) {
    out.allow.push_back(rule_path(named));
  } else {
    if (fallback.empty()) return std::nullopt;
    out.allow.push_back(rule_path(fallback));
    struct stat st {};
    if (!former.empty() && ::lstat(former.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      add_once(out.allow, rule_path(former));
  }
  out.own = out.allow;
  if (!fallback.empty()) add_once(out.own, rule_path(fallback));
  if (!former.empty()) add_once(out.own, rule_path(former));
  return out;
}

}  // namespace handoff::cli
