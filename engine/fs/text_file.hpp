// A file that already holds a text byte for byte, offered to the artifact store so that it can
// hard-link it instead of writing a second copy (artifact_store::save). The daemon offers the
// durable queue's texts/<sha256>.txt: content addressed, written 0600 and fsynced by the queue,
// and checked against its hash when the queue recovers.
#pragma once

#include <string>

namespace handoff {

struct text_file {
  int dir_fd = -1;   // the directory holding it; must stay open while save() runs
  std::string name;  // one path component inside dir_fd (never followed if a symlink)
  // Or, when not -1: an open file with no name holding the text, fsynced (open_unnamed and
  // fill_unnamed in atomic_file.hpp, artifact_store::write_unnamed); dir_fd and name are then
  // unused.
  int fd = -1;
};

}  // namespace handoff
