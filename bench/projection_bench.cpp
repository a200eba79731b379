// handoff's projection against its floor: Google Benchmark over every input case of
// projection_inputs.hpp, prepared as the daemon meets it (projection_case.hpp).
//
//   projection/<case>         fits() + project(): the engine step build_batch runs per result,
//                             the hash already known (the queue computed it on arrival)
//   projection_sha256/<case>  the same plus sha256_hex() of the full text: the whole CPU cost
//                             a cut result carries from completion to delivery
//   batch/<case>              build_batch() with that one result and no store: the daemon's
//                             call (measure, allocate, project, render), minus the disk write
//   memchr/<case>             one memchr pass counting '\n': the floor for touching the bytes
//   sha256/<case>             one OpenSSL SHA-256 pass: the floor for hashing them
//
// Every benchmark sets bytes processed to the input's size, so throughput is comparable.
// `--dump-inputs DIR` writes the inputs and their Pi budgets for bench/pi_truncate.mjs instead.
#include <benchmark/benchmark.h>
#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/text/projection.hpp"
#include "engine/fs/sha256.hpp"
#include "projection_case.hpp"

namespace handoff::bench {
namespace {

std::size_t memchr_newlines(std::string_view text) noexcept {
  std::size_t count = 0;
  const char* p = text.data();
  const char* const end = p + text.size();
  while (const void* hit = std::memchr(p, '\n', static_cast<std::size_t>(end - p))) {
    ++count;
    p = static_cast<const char*>(hit) + 1;
  }
  return count;
}

void openssl_sha256(std::string_view text, std::array<unsigned char, EVP_MAX_MD_SIZE>& digest) {
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("EVP_Digest failed");
}

void run_projection(benchmark::State& state, const prepared_case& c) {
  for (auto _ : state) {
    projection p = fits(c.input->text, c.limits) ? project(c.input->text, c.limits, artifact_ref{})
                                                 : project(c.input->text, c.limits, c.artifact);
    benchmark::DoNotOptimize(p);
  }
}

void run_projection_sha256(benchmark::State& state, const prepared_case& c) {
  for (auto _ : state) {
    artifact_ref artifact = c.artifact;
    artifact.sha256 = sha256_hex(c.input->text);
    projection p = fits(c.input->text, c.limits) ? project(c.input->text, c.limits, artifact_ref{})
                                                 : project(c.input->text, c.limits, artifact);
    benchmark::DoNotOptimize(p);
  }
}

void run_batch(benchmark::State& state, const prepared_case& c) {
  for (auto _ : state) {
    batch b = build_batch({&c.child, 1}, c.options, nullptr);
    benchmark::DoNotOptimize(b);
  }
}

void run_memchr(benchmark::State& state, const prepared_case& c) {
  for (auto _ : state) benchmark::DoNotOptimize(memchr_newlines(c.input->text));
}

void run_sha256(benchmark::State& state, const prepared_case& c) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  for (auto _ : state) {
    openssl_sha256(c.input->text, digest);
    benchmark::DoNotOptimize(digest);
  }
}

void register_all(const std::vector<prepared_case>& cases) {
  using runner = void (*)(benchmark::State&, const prepared_case&);
  constexpr std::array<std::pair<std::string_view, runner>, 5> kinds = {{
      {"projection", run_projection},
      {"projection_sha256", run_projection_sha256},
      {"batch", run_batch},
      {"memchr", run_memchr},
      {"sha256", run_sha256},
  }};
  for (const prepared_case& c : cases) {
    for (const auto& [kind, run] : kinds) {
      const std::string name = std::string(kind) + "/" + c.input->name;
      benchmark::RegisterBenchmark(name.c_str(),
                                   [&c, run = run](benchmark::State& state) {
                                     run(state, c);
                                     state.SetBytesProcessed(state.iterations() *
                                                             static_cast<std::int64_t>(c.input->bytes));
                                   })
          // Wall time, as the Node peer measures; medians over repetitions absorb the noise.
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace
}  // namespace handoff::bench

int main(int argc, char** argv) {
  using namespace handoff::bench;
  const std::vector<input_case> inputs = all_cases();
  std::vector<prepared_case> cases;
  for (const input_case& input : inputs) cases.push_back(prepare(input));

  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--dump-inputs") {
      if (i + 1 >= argc) {
        std::cerr << "usage: " << argv[0] << " --dump-inputs DIR\n";
        return 2;
      }
      dump_inputs(cases, argv[i + 1]);
      return 0;
    }
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  register_all(cases);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
