#include "core/report/best_iteration.h"

#include "core/store/records.h"
#include "core/store/store.h"

namespace kl::report {

namespace {

std::optional<int> highestPassingSpeedup(const std::vector<store::IterationRow>& rows)
{
    std::optional<int> chosen;
    double best = 0.0;
    for (const auto& r : rows)
        if (r.category == "passed" && r.speedup && *r.speedup > best) {
            best = *r.speedup;
            chosen = r.index;
        }
    return chosen;
}

} // namespace

std::optional<int> bestIteration(const store::SessionRecord& session, const std::vector<store::IterationRow>& rows)
{
    if (const auto recorded = store::summaryBestIteration(session))
        return recorded;
    return highestPassingSpeedup(rows);
}

std::optional<int> bestIteration(const store::Store& store, std::int64_t session)
{
    const auto record = store.session(session);
    if (record)
        if (const auto recorded = store::summaryBestIteration(*record))
            return recorded;
    return highestPassingSpeedup(store.listIterations(session));
}

std::vector<store::SessionRow> listSessions(const store::Store& store)
{
    // The listing's own best is the highest passing speedup (the fallback above, in one query); where the
    // loop recorded its incumbent, that iteration's figures replace it.
    std::vector<store::SessionRow> rows = store.listSessions();
    for (store::SessionRow& row : rows) {
        const auto recorded = store::summaryBestIteration(row.session);
        if (!recorded)
            continue;
        auto speedup = store::summaryBestSpeedup(row.session);
        auto medianUs = store::summaryBestMedianUs(row.session);
        if (!speedup) // a summary without the figures: the iteration's own
            for (const auto& r : store.listIterations(row.session.id))
                if (r.index == *recorded) {
                    speedup = r.speedup;
                    medianUs = r.medianUs;
                }
        row.bestSpeedup = speedup;
        row.bestMedianUs = medianUs;
    }
    return rows;
}

} // namespace kl::report
