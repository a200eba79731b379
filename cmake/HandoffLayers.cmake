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

# The same rule inside the CLI for its harness folders (client/cli/harness/, docs/design.md §13):
# a harness may include the hook core (harness/core/), the generic harness files beside the
# folders (harness.hpp, hook_groups.hpp, hook_input.hpp, settings_file.hpp, store_dirs.hpp), the
# CLI's own headers and the libraries it links, but never another harness's folder. Each folder is
# its own library whose include directory is a tree in the build directory holding links to
# exactly those: cli/*.hpp, cli/harness/*.hpp, cli/harness/core and cli/harness/<name>, so
# `#include "cli/harness/claude_code/hook.hpp"` from gemini/ does not compile. `cli_dir` is the
# CLI's source folder; `name` the harness folder ("core" for the core itself, which gets no
# harness's folder).
function(handoff_harness_includes target cli_dir name)
  set(root "${PROJECT_BINARY_DIR}/layers/harness-${name}")
  file(MAKE_DIRECTORY "${root}/cli/harness")
  file(GLOB cli_headers CONFIGURE_DEPENDS "${cli_dir}/*.hpp")
  file(GLOB harness_headers CONFIGURE_DEPENDS "${cli_dir}/harness/*.hpp")
  foreach(header IN LISTS cli_headers)
    get_filename_component(file "${header}" NAME)
    file(CREATE_LINK "${header}" "${root}/cli/${file}" SYMBOLIC)
  endforeach()
  foreach(header IN LISTS harness_headers)
    get_filename_component(file "${header}" NAME)
    file(CREATE_LINK "${header}" "${root}/cli/harness/${file}" SYMBOLIC)
  endforeach()
  file(CREATE_LINK "${cli_dir}/harness/core" "${root}/cli/harness/core" SYMBOLIC)
  if(NOT name STREQUAL "core")
    file(CREATE_LINK "${cli_dir}/harness/${name}" "${root}/cli/harness/${name}" SYMBOLIC)
  endif()
  target_include_directories(${target} PUBLIC "${root}")
endfunction()
