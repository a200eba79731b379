# One interface target carries our warning policy and the optional sanitizers.
add_library(handoff_warnings INTERFACE)
add_library(handoff::warnings ALIAS handoff_warnings)
target_compile_options(handoff_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough)
# g++ 12 flags Asio's coroutine frame allocator as a new/delete mismatch (a false positive).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(handoff_warnings INTERFACE -Wno-mismatched-new-delete)
  # In a unity build each source is included into a batch file, where g++ takes the coroutine
  # frames of its lambdas for types of a header with internal linkage (a false positive).
  if(CMAKE_UNITY_BUILD)
    target_compile_options(handoff_warnings INTERFACE -Wno-subobject-linkage)
  endif()
endif()
if(HANDOFF_SANITIZE)
  target_compile_options(handoff_warnings INTERFACE -fsanitize=${HANDOFF_SANITIZE} -fno-omit-frame-pointer)
  target_link_options(handoff_warnings INTERFACE -fsanitize=${HANDOFF_SANITIZE})
  # clang < 15: UBSan's -fsanitize=function on coroutines fails in the backend with "Cannot
  # represent a difference across sections" (llvm-project#49689); the rest of UBSan stays on.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 15
     AND ",${HANDOFF_SANITIZE}," MATCHES ",undefined,")
    target_compile_options(handoff_warnings INTERFACE -fno-sanitize=function)
  endif()
endif()

# Our own targets build with warnings as errors; third-party headers come in as SYSTEM.
function(handoff_target target)
  target_link_libraries(${target} PRIVATE handoff::warnings)
  set_target_properties(${target} PROPERTIES COMPILE_WARNING_AS_ERROR ON)
endfunction()
