# Every third-party dependency comes from Debian's packages (scripts/setup installs them).
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(OpenSSL 3 REQUIRED COMPONENTS Crypto)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 REQUIRED)
find_package(tomlplusplus 3 REQUIRED)  # Codex's config.toml (`handoff setup codex`)

# Debian's libasio-dev is header-only and ships no CMake config: make the target ourselves.
find_path(ASIO_INCLUDE_DIR asio.hpp REQUIRED)
add_library(asio::asio INTERFACE IMPORTED)
target_include_directories(asio::asio SYSTEM INTERFACE ${ASIO_INCLUDE_DIR})
# clang 14 with libstdc++ needs ASIO_HAS_CO_AWAIT spelled out to enable co_await in Asio 1.22.
target_compile_definitions(asio::asio INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED ASIO_HAS_CO_AWAIT)
target_link_libraries(asio::asio INTERFACE Threads::Threads)
