#pragma once
// One analysis of the candidate in the editor: parse its declarations, compile it with NVRTC and
// compute its static report. Runs on a worker thread; the result is an immutable value the
// window only reads.
#include "core/compile/static_report.h"
#include "core/model/error.h"
#include "core/model/problem.h"

#include <QtGlobal>

#include <memory>
#include <optional>
#include <string>

namespace kl::gui {

struct AnalysisRequest {
    quint64 id = 0;
    std::shared_ptr<const Problem> problem;
    std::string source; // the editor's text
    std::string fileName; // for messages: the baseline's file name
    TunableValues tunables; // the engineer's choice; names not declared, or values not allowed, fall back to defaults
};

struct AnalysisOutcome {
    quint64 id = 0;
    std::shared_ptr<const Candidate> candidate; // null when the source did not parse
    TunableValues tunables; // the values analysed
    std::shared_ptr<const StaticReport> report; // null on an input error
    std::optional<Error> error; // a categorised input error (candidate.*, plan.*, ...)
    double wallMillis = 0.0;
};

// Never throws: every failure comes back categorised in the outcome.
std::shared_ptr<const AnalysisOutcome> analyse(const AnalysisRequest& request);

} // namespace kl::gui
