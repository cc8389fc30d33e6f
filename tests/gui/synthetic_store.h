#pragma once
// A store with one synthetic session written through the real Store API: two main sizes, stall
// profiles, failures (wrong results, compile errors), forks in the proposal tree and a few
// source changes. The GUI tests use a small one; bench/gui builds one of 10,000 iterations.
#include <cstdint>
#include <filesystem>

namespace kl::testing {

struct SyntheticSession {
    std::int64_t sessionId = 0;
    int iterations = 0;
};

// Every 7th iteration fails verification (wrong-result) and every 13th does not compile; the
// others pass, are timed at "4096x1024" and "8192x4096" and carry stall ratios.
SyntheticSession writeSyntheticStore(const std::filesystem::path& file, int iterations);

} // namespace kl::testing
