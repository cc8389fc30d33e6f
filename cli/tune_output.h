#pragma once
// How `tune` and `evaluate` show a session: a progress line on stderr while a round runs, one
// line per iteration, a summary; or JSON lines with --json.
#include "core/loop/tuning_session.h"

#include <iosfwd>
#include <mutex>
#include <string_view>

namespace kl::cli {

// Subscribes to the session's event stream (loop_events.h).
class TuneOutput {
public:
    TuneOutput(std::ostream& out, bool json, int budget);
    void onEvent(const LoopEvent& event); // any thread (proposer text streams from the LLM's)
    void summary(const LoopSummary& summary);

private:
    void phaseChanged(int round, LoopPhase phase, const std::string& detail);
    void iterationFinished(const IterationOutcome& outcome);
    // An LLM's text as it streams in: the first alternative is echoed to stderr under a heading per
    // role; the others only announce themselves. Nothing with --json.
    void proposerText(const ProposerText& text);
    void clearProgress();
    std::ostream& m_out;
    bool m_json;
    bool m_tty;
    int m_budget;
    bool m_header = false;
    bool m_progressShown = false;
    std::mutex m_textMutex;
    std::string m_textRole; // the role whose text is being echoed
    bool m_textOthersAnnounced = false;
};

nlohmann::json outcomeJson(const IterationOutcome& outcome);

} // namespace kl::cli
