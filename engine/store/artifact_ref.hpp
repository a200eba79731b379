// Where the full text of a cut result went: what the store's save() returns and what a
// projection's footer names (or says was not saved, and why).
#pragma once

#include <string>

#include "engine/text/reader_profile.hpp"

namespace handoff {

struct artifact_ref {
  bool saved = false;   // true: `path` holds the exact full text
  std::string path;     // absolute path of the artifact when saved, else empty
  std::string sha256;   // lowercase hex SHA-256 of the full text (set even when not saved)
  std::string error;    // why it was not saved (plain words, errno text), when !saved
  // The `handoff` CLI the footer's bash commands run, printed as one single-quoted shell word:
  // an absolute path the daemon (or the CLI itself) resolved, or the bare name (then the
  // parent's shell must find it on its PATH).
  std::string reader = "handoff";
  // The tools the footer's calls are for and the pages they return uncut (Pi's by default).
  const reader_profile* profile = &pi_reader;
  // Set when the caller offered the text as a file to link and a copy was written (or nothing
  // saved) instead: why the link was not made ("Invalid cross-device link ..."). For logs.
  std::string link_error = {};
};

}  // namespace handoff
