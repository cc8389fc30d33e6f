#pragma once
// How `tune` and `evaluate` show a session: a progress line on stderr while a round runs, one
// line per iteration, a summary; or JSON lines with --json.
#include "core/loop/tuning_session.h"

#include <iosfwd>

namespace kl::cli {

class TuneOutput : public LoopObserver {
public:
    TuneOutput(std::ostream& out, bool json, int budget);
    void phaseChanged(int round, LoopPhase phase, const std::string& detail) override;
    void iterationFinished(const IterationOutcome& outcome) override;
    void proposerText(const std::string& text) override;
    void summary(const LoopSummary& summary);

private:
    void clearProgress();
    std::ostream& m_out;
    bool m_json;
    bool m_tty;
    int m_budget;
    bool m_header = false;
    bool m_progressShown = false;
};

nlohmann::json outcomeJson(const IterationOutcome& outcome);

} // namespace kl::cli
