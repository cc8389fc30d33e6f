#pragma once
// "Best" in a session, one definition for every place that names it: the session list and `history`,
// Review ▸ Select Best, export-kernel and the campaign report. Two of them disagreed (the list took the
// highest speedup, 1.81x at iteration 26; Select Best the loop's incumbent, 1.80x at iteration 6).
#include "core/store/records.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace kl::store {
class Store;
}

namespace kl::report {

// The loop's incumbent as the session's summary recorded it (a later iteration faster only within
// the noise does not replace it); else, for a session still running, one that ended before its
// summary or an older file, the passing iteration with the highest speedup; else nullopt.
std::optional<int> bestIteration(const store::SessionRecord& session, const std::vector<store::IterationRow>& rows);
std::optional<int> bestIteration(const store::Store& store, std::int64_t session);

// The store's sessions, newest first, each row's best speedup and median those of its bestIteration.
std::vector<store::SessionRow> listSessions(const store::Store& store);

} // namespace kl::report
