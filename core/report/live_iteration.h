#pragma once
// An iteration as a window following the loop shows it, built from the outcome the loop announced
// (IterationFinished) instead of read back from the store: its history row and its chart figures, the
// same values the store's reading gives once the iteration is committed (the start and end times
// aside: the store's clock). An iteration's detail (source, findings, exchanges) is still read from the
// store when it is selected. No Qt.
#include "core/figures/iteration_figures.h"
#include "core/loop/loop_values.h"
#include "core/store/records.h"

#include <cstdint>
#include <optional>

namespace kl::report {

struct LiveIteration {
    store::IterationRow row;
    figures::IterationFigures figures;
    std::optional<std::int64_t> parentCandidateId; // the candidate it was built on
};

LiveIteration liveIteration(const IterationOutcome& outcome);

} // namespace kl::report
