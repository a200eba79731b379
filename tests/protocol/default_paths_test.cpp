// Where handoffd and its clients look by default (protocol/default_paths.hpp): the artifact
// store in handoff's own cache directory, never under a harness's, and its former default.
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "protocol/default_paths.hpp"
#include "support/scoped_env.hpp"

namespace fs = std::filesystem;
using handoff::rpc::default_artifact_dir;
using handoff::rpc::legacy_artifact_dir;

namespace {

using paths_env = handoff::test::scoped_env;

}  // namespace

TEST_CASE("the artifact store defaults to handoff's own cache directory, whatever harness is installed") {
  paths_env env;
  env.set("HOME", "/home/u");
  env.set("PI_CODING_AGENT_DIR", "/home/u/pi-agent");
  env.set("XDG_CACHE_HOME", std::nullopt);
  CHECK(default_artifact_dir() == fs::path("/home/u/.cache/handoff/results"));
  env.set("XDG_CACHE_HOME", "/var/cache/u");
  CHECK(default_artifact_dir() == fs::path("/var/cache/u/handoff/results"));
  // The XDG spec: a relative value is invalid and ignored, as is an empty one.
  env.set("XDG_CACHE_HOME", "relative/cache");
  CHECK(default_artifact_dir() == fs::path("/home/u/.cache/handoff/results"));
  env.set("XDG_CACHE_HOME", "");
  CHECK(default_artifact_dir() == fs::path("/home/u/.cache/handoff/results"));
  // No HOME: an absolute XDG_CACHE_HOME is enough; without it there is no default.
  env.set("HOME", std::nullopt);
  env.set("XDG_CACHE_HOME", "/var/cache/u");
  CHECK(default_artifact_dir() == fs::path("/var/cache/u/handoff/results"));
  env.set("XDG_CACHE_HOME", std::nullopt);
  CHECK(default_artifact_dir().empty());
}

TEST_CASE("the former default store is under Pi's agent directory, and only there") {
  paths_env env;
  env.set("HOME", "/home/u");
  env.set("XDG_CACHE_HOME", "/var/cache/u");
  env.set("PI_CODING_AGENT_DIR", std::nullopt);
  CHECK(legacy_artifact_dir() == fs::path("/home/u/.pi/agent/cache/openpi/subagent-results"));
  env.set("PI_CODING_AGENT_DIR", "/opt/pi");
  CHECK(legacy_artifact_dir() == fs::path("/opt/pi/cache/openpi/subagent-results"));
  CHECK(default_artifact_dir() != legacy_artifact_dir());
  env.set("PI_CODING_AGENT_DIR", std::nullopt);
  env.set("HOME", std::nullopt);
  CHECK(legacy_artifact_dir().empty());
}
