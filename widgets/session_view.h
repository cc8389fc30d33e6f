#pragma once
// What the review panels show about one stored session, as immutable values: the session, its
// iteration rows (what `history` lists), who each candidate came from, and the chart figures.
// The app builds it from a read-only store; widgets only read it.
#include "core/figures/iteration_figures.h"
#include "core/loop/loop_values.h"
#include "core/store/records.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl::gui {

struct SessionView {
    store::SessionRecord session;
    std::vector<store::IterationRow> rows; // index order
    std::string problemJson; // the session's problem file as stored (tolerances, outputs); may be empty
    // The store's other sessions of the same problem (newest first): what the diff can compare against.
    std::vector<store::SessionRow> sameProblem;
    // candidate id → its parent candidate (none for the baseline)
    std::map<std::int64_t, std::optional<std::int64_t>> parentOf;
    // Per-iteration chart figures (index order); empty while they are being read.
    std::vector<figures::IterationFigures> figures;
    std::vector<std::string> sizes; // timed main sizes, in first-seen order
    std::map<std::int64_t, int> firstIterationOf; // candidate id → first iteration that evaluated it
    // How the session stopped (its stored summary, read back typed; none while it runs) and each
    // iteration's last decision in words: the history's stop line and hypothesis log (session_notes.h).
    std::optional<LoopSummary> summary;
    std::map<int, std::string> decisionReasons;

    // Fills firstIterationOf from rows (call after filling rows).
    void indexCandidates();

    const store::IterationRow* row(int index) const;
    // The first iteration that evaluated a candidate (0 when none did).
    int iterationOf(std::int64_t candidateId) const;
    // The iteration of this iteration's parent candidate (0: the baseline has none).
    int parentIteration(int index) const;
    // The session's baseline iteration: the first one whose proposer detail is "baseline", else (a
    // problem that had no kernel) the first that passed, else 0.
    int baselineIteration() const;
    const figures::IterationFigures* figuresOf(int index) const;
};

// One selected iteration and what its panels compare it with. `compared` is the iteration the
// diff and the deltas are taken against (its parent unless the engineer chose another);
// `baseline` the session's baseline iteration. Either may be null.
struct IterationFocus {
    std::shared_ptr<const SessionView> session;
    std::shared_ptr<const store::IterationDetail> detail;
    std::shared_ptr<const store::IterationDetail> compared;
    std::shared_ptr<const store::IterationDetail> baseline;
    // Set when the engineer pinned the baseline (an iteration of this or another session, as Nsight
    // Compute's baselines): what the panels call it, "iteration 12" or "other.klsession #6".
    std::string pinnedBaseline;
    bool comparedIsParent = true;
    int index() const { return detail ? detail->row.index : 0; }
};

} // namespace kl::gui
