#pragma once
// The standalone .cu written for a session's best iteration (best_iteration.h) or any other
// (`export-kernel`, the GUI's Export Kernel): the source with its chosen tunables fixed and a header
// saying how it was measured.
#include "core/report/best_iteration.h" // which iteration is the best: one definition
#include "core/store/records.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kl::store {
class Store;
}

namespace kl::report {

struct ExportedKernel {
    std::int64_t session = 0;
    int iteration = 0;
    std::string text; // the .cu file's content
};

// `iteration` 0 picks the best. Throws kl::Error "session.no-best" (nothing passed) and
// "store.no-such-iteration".
ExportedKernel exportKernel(const store::Store& store, std::int64_t session, int iteration = 0);

// The file's text for one stored iteration; `session` may be null (no session row). `fixedSizes`: the
// problem's "sizes.fixed" (verified at its main sizes only, and why), said in the header.
std::string exportedKernelText(std::int64_t sessionId, const store::SessionRecord* session,
    const store::IterationDetail& iteration, const std::string& fixedSizes = {});

} // namespace kl::report
