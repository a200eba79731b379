// Environment variables set (or, with nullopt, unset) for one scope, and put back as they were
// when it ends, last set first. For tests that read a default from the environment.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace handoff::test {

class scoped_env {
 public:
  scoped_env() = default;
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
  ~scoped_env() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) apply(it->first, it->second);
  }

  void set(const char* name, std::optional<std::string> value) {
    const char* was = std::getenv(name);
    saved_.push_back({name, was != nullptr ? std::optional<std::string>(was) : std::nullopt});
    apply(name, value);
  }

 private:
  static void apply(const char* name, const std::optional<std::string>& value) {
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

}  // namespace handoff::test
