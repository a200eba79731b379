// A private temporary directory, removed with everything in it when the object goes.
#pragma once

#include <filesystem>
#include <string>

namespace handoff::test {

class temp_dir {
 public:
  explicit temp_dir(const std::string& prefix = "handoff-test");
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace handoff::test
