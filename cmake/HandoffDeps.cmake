# Every third-party dependency comes from Debian's packages (scripts/setup installs them).
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(OpenSSL 3 REQUIRED COMPONENTS Crypto)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 REQUIRED)

# Debian's libasio-dev is header-only and ships no CMake config: make the target ourselves.
find_path(ASIO_INCLUDE_DIR asio.hpp REQUIRED)
add_library(asio::asio INTERFACE IMPORTED)
target_include_directories(asio::asio SYSTEM INTERFACE ${ASIO_INCLUDE_DIR})
# clang 14 with libstdc++ needs ASIO_HAS_CO_AWAIT spelled out to enable co_await in Asio 1.22.
target_compile_definitions(asio::asio INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED ASIO_HAS_CO_AWAIT)
target_link_libraries(asio::asio INTERFACE Threads::Threads)

# toml++ (Codex's config.toml, `handoff setup codex`), header-only and with TOML 1.1's syntax
# (newlines and trailing commas in inline tables, \e and \xHH escapes, times without seconds),
# which Codex reads: Debian's shared library parses TOML 1.0 only, and would refuse such a file.
find_package(tomlplusplus 3 REQUIRED)
get_target_property(TOMLPLUSPLUS_INCLUDE_DIRS tomlplusplus::tomlplusplus INTERFACE_INCLUDE_DIRECTORIES)
add_library(tomlplusplus::header_only INTERFACE IMPORTED)
target_include_directories(tomlplusplus::header_only SYSTEM INTERFACE ${TOMLPLUSPLUS_INCLUDE_DIRS})
target_compile_definitions(tomlplusplus::header_only INTERFACE TOML_HEADER_ONLY=1 TOML_ENABLE_UNRELEASED_FEATURES=1)
