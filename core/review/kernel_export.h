#pragma once
// A session's best iteration and the standalone .cu written for it (`export-kernel`, the GUI's
// Export Kernel): the source with its chosen tunables fixed and a header saying how it was measured.
#include "core/store/records.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kl::store {
class Store;
}

namespace kl::review {

// The loop's own best (faster beyond the noise at each step, from the session summary) when it
// recorded one; else the highest speedup that passed (older sessions, cancelled ones); else nullopt.
std::optional<int> bestIteration(const store::Store& store, std::int64_t session);

struct ExportedKernel {
    std::int64_t session = 0;
    int iteration = 0;
    std::string text; // the .cu file's content
};

// `iteration` 0 picks the best. Throws kl::Error "session.no-best" (nothing passed) and
// "store.no-such-iteration".
ExportedKernel exportKernel(const store::Store& store, std::int64_t session, int iteration = 0);

// The file's text for one stored iteration; `session` may be null (no session row).
std::string exportedKernelText(
    std::int64_t sessionId, const store::SessionRecord* session, const store::IterationDetail& iteration);

} // namespace kl::review
