# The build enforces the layers (docs/design.md §1). Code names a layer's headers with the
# layer's folder, `#include "engine/text/budget.hpp"`, and a library's include directory exposes that
# one folder only: a directory in the build tree holding a single link, <layer> -> the sources.
# A target can include another layer's headers only by linking its library, so an include that
# points back up (the engine reaching into the protocol or the daemon) fails to compile.
function(handoff_layer_includes target layer)
  set(root "${PROJECT_BINARY_DIR}/layers/${layer}")
  file(MAKE_DIRECTORY "${root}")
  file(CREATE_LINK "${CMAKE_CURRENT_SOURCE_DIR}" "${root}/${layer}" SYMBOLIC)
  target_include_directories(${target} PUBLIC "${root}")
endfunction()
