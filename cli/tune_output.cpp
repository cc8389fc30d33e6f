#include "cli/tune_output.h"

#include "cli/table_text.h"
#include "core/loop/store_records.h"
#include "core/store/summary_columns.h"

#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace kl::cli {

TuneOutput::TuneOutput(std::ostream& out, bool json, int budget)
    : m_out(out)
    , m_json(json)
    , m_tty(isatty(STDERR_FILENO) != 0)
    , m_budget(budget)
{
}

void TuneOutput::clearProgress()
{
    if (m_progressShown) {
        std::cerr << "\r\033[K" << std::flush;
        m_progressShown = false;
    }
}

void TuneOutput::phaseChanged(int round, LoopPhase phase, const std::string& detail)
{
    if (m_json || !m_tty || phase == LoopPhase::Finished)
        return;
    const int width = 24;
    const int filled = m_budget > 0 ? std::min(width, round * width / m_budget) : 0;
    std::string bar(std::size_t(filled), '#');
    bar.resize(std::size_t(width), '.');
    std::cerr << "\r\033[K[" << bar << "] round " << round;
    if (m_budget > 0)
        std::cerr << "/" << m_budget;
    std::cerr << "  " << loopPhaseName(phase) << "  " << detail.substr(0, 60) << std::flush;
    m_progressShown = true;
}

void TuneOutput::onEvent(const LoopEvent& event)
{
    if (const auto* p = std::get_if<PhaseChanged>(&event))
        phaseChanged(p->round, p->phase, p->detail);
    else if (const auto* f = std::get_if<IterationFinished>(&event))
        iterationFinished(f->outcome);
    else if (const auto* t = std::get_if<ProposerText>(&event))
        proposerText(*t);
}

void TuneOutput::proposerText(const ProposerText& t)
{
    if (m_json)
        return;
    std::lock_guard lock(m_textMutex);
    clearProgress();
    if (t.role != m_textRole) {
        m_textRole = t.role;
        m_textOthersAnnounced = false;
        std::cerr << "\n--- " << t.role << " ---\n";
    }
    if (t.alternative == 0) {
        std::cerr << t.text << std::flush;
    } else if (!m_textOthersAnnounced) {
        m_textOthersAnnounced = true;
        std::cerr << "\n[more alternatives are streaming; only the first is shown]\n" << std::flush;
    }
}

nlohmann::json outcomeJson(const IterationOutcome& o)
{
    nlohmann::json j = { { "iteration", o.index }, { "round", o.round }, { "proposer", o.proposer },
        { "status", o.status }, { "category", o.category }, { "detail", o.detail }, { "tunables", o.tunables },
        { "hypothesis", o.hypothesis }, { "kept", o.kept }, { "from_cache", o.fromCache },
        { "comparison", o.comparison }, { "loses_on_some_size", o.losesOnSomeSize },
        { "speedup_by_size", o.speedupBySize }, { "phases_ms", o.phasesMs } };
    auto opt
        = [&](const char* key, const std::optional<double>& v) { j[key] = v ? nlohmann::json(*v) : nlohmann::json(); };
    opt("median_us", o.medianUs);
    opt("gbps", o.gbps);
    opt("pct_of_copy", o.pctOfCopy);
    opt("speedup", o.speedup);
    opt("speedup_over_best", o.speedupOverBest);
    opt("predicted_speedup", o.predictedSpeedup);
    j["top_finding"] = o.findings.empty() ? nlohmann::json() : nlohmann::json(o.findings.front().title);
    return j;
}

void TuneOutput::iterationFinished(const IterationOutcome& o)
{
    clearProgress();
    if (m_json) {
        m_out << outcomeJson(o).dump() << "\n" << std::flush;
        return;
    }
    if (!m_header) {
        char head[256];
        std::snprintf(head, sizeof head, "%4s %-8s %-22s %10s %8s %6s %8s  %s", "iter", "proposer", "verdict",
            "median us", "GB/s", "%copy", "speedup", "top finding / detail");
        m_out << head << "\n";
        m_header = true;
    }
    std::string verdict = o.category + (o.kept ? " *" : "") + (o.fromCache ? " (cached)" : "");
    std::string tail
        = o.category == "passed" ? (o.findings.empty() ? std::string() : o.findings.front().title) : o.detail;
    if (o.losesOnSomeSize)
        tail = "loses on some size; " + tail;
    char line[512];
    std::snprintf(line, sizeof line, "%4d %-8s %-22s %10s %8s %6s %8s  %s", o.index, o.proposer.c_str(),
        verdict.substr(0, 22).c_str(), fixed(o.medianUs, 2).c_str(), fixed(o.gbps, 0).c_str(),
        fixed(o.pctOfCopy, 1).c_str(), (o.speedup ? fixed(*o.speedup, 2) + "x" : std::string("-")).c_str(),
        tail.substr(0, 110).c_str());
    m_out << line << "\n";
    if (!o.tunables.empty() && o.proposer == "tuner")
        m_out << "     " << tunablesText(o.tunables) << (o.comparison.empty() ? "" : "  vs best: " + o.comparison)
              << "\n";
    if (o.proposer == "llm" && !o.hypothesis.empty()) {
        // The hypothesis log, one line: what the model expected against what was measured.
        const auto firstLine = o.hypothesis.substr(0, o.hypothesis.find('\n'));
        m_out << "     plan: " << firstLine.substr(0, 100) << "\n";
        if (o.predictedSpeedup || o.speedupOverBest)
            m_out << "     predicted " << (o.predictedSpeedup ? fixed(*o.predictedSpeedup, 2) + "x" : std::string("-"))
                  << " over the best, measured "
                  << (o.speedupOverBest ? fixed(*o.speedupOverBest, 2) + "x" : std::string("-"))
                  << (o.comparison.empty() ? "" : " (" + o.comparison + ")") << "\n";
    }
    m_out << std::flush;
}

void TuneOutput::summary(const LoopSummary& s)
{
    clearProgress();
    if (m_json) {
        // The session's summary as stored, with what a reader of the stream needs besides.
        auto j = store::summaryColumn(storedSummary(s));
        j["summary"] = true;
        j["session"] = s.sessionId;
        if (s.baseline)
            j["baseline"] = outcomeJson(*s.baseline);
        if (s.best)
            j["best"] = outcomeJson(*s.best);
        m_out << j.dump() << "\n";
        return;
    }
    m_out << "\nsession " << s.sessionId << ": " << s.stopReason << "\n";
    if (s.baseline)
        m_out << "  baseline   " << fixed(s.baseline->medianUs, 2) << " us, " << fixed(s.baseline->gbps, 0) << " GB/s, "
              << fixed(s.baseline->pctOfCopy, 1) << "% of the same-size copy\n";
    else if (s.best && s.best->medianUs && s.best->speedup) // no kernel to start from: eager is the baseline
        m_out << "  baseline   PyTorch eager, " << fixed(*s.best->medianUs * *s.best->speedup, 2)
              << " us in the best's own job (the problem had no kernel)\n";
    if (s.best)
        m_out << "  best       iteration " << s.best->index << " (" << s.best->proposer << ") "
              << fixed(s.best->medianUs, 2) << " us, " << fixed(s.best->gbps, 0) << " GB/s, "
              << fixed(s.best->pctOfCopy, 1) << "% of copy, " << fixed(s.best->speedup, 2)
              << (s.baseline ? "x vs baseline" : "x vs eager")
              << (s.best->tunables.empty() ? "" : "  [" + tunablesText(s.best->tunables) + "]") << "\n";
    m_out << "  " << s.evaluated << " candidates (" << s.passed << " passed) in " << fixed(s.wallSeconds, 1) << " s, "
          << fixed(s.candidatesPerMinute, 1) << " per minute\n";
    if (s.rounds > 0 && (s.candidatesPerRound > 1 || s.tokens > 0))
        m_out << "  k=" << s.candidatesPerRound << " per round: pass@k " << fixed(s.passAtK, 2) << ", speedup@k "
              << fixed(s.speedupAtK, 2) << "x over " << s.rounds << " rounds"
              << (s.tokens > 0 ? ", " + std::to_string(s.tokens) + " LLM tokens" : std::string()) << "\n";
    if (s.compiledAhead > 0)
        m_out << "  compiled ahead while the GPU measured: " << s.compiledAhead << " guesses, " << s.usedAhead
              << " of them proposed\n";
}

} // namespace kl::cli
