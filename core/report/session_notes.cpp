// How a session stopped, its GPU models and its hypothesis log, in the words both front ends print.

#include "core/report/session_notes.h"

#include "core/model/number_text.h"

#include <cstdio>

namespace kl::report {

namespace {

} // namespace

std::string stopLine(const LoopSummary& s)
{
    std::string line = "stopped: " + s.stopReason + "; " + std::to_string(s.evaluated) + " candidates in "
        + fixed(s.wallSeconds, 1) + " s (" + fixed(s.candidatesPerMinute, 1) + "/min)";
    if (s.passAtK)
        line += "; k=" + std::to_string(s.candidatesPerRound) + ": pass@k " + fixed(*s.passAtK, 2) + ", speedup@k "
            + fixed(s.speedupAtK.value_or(0.0), 2) + "x";
    if (s.tokens > 0)
        line += "; " + std::to_string(s.tokens) + " LLM tokens";
    return line;
}

GpuModels gpuModelsOf(const std::map<int, store::Store::MeasuredOn>& runners)
{
    GpuModels models;
    for (const auto& [index, m] : runners)
        if (!m.model.empty())
            ++models[m.model];
    return models;
}

GpuModels gpuModelsOf(const std::vector<figures::IterationFigures>& figures)
{
    GpuModels models;
    for (const auto& f : figures)
        if (!f.gpuModel.empty())
            ++models[f.gpuModel];
    return models;
}

std::string mixedModelsWarning(const GpuModels& models)
{
    if (models.size() < 2)
        return {};
    std::string text
        = "warning [store.mixed-gpu-models]: results of " + std::to_string(models.size()) + " GPU models (";
    bool first = true;
    for (const auto& [model, n] : models) {
        text += (first ? "" : ", ") + model + ": " + std::to_string(n);
        first = false;
    }
    return text + "); each speedup is against the baseline on its own GPU, never compare across models";
}

std::vector<HypothesisEntry> hypothesisLog(
    const std::vector<store::IterationRow>& rows, const std::map<int, std::string>& decisionReasons)
{
    std::vector<HypothesisEntry> log;
    for (const auto& r : rows) {
        if (r.hypothesis.empty() && !r.predictedSpeedup)
            continue;
        HypothesisEntry e;
        e.index = r.index;
        e.proposer = store::proposedBy(r);
        if (e.proposer.empty())
            e.proposer = "-";
        e.verdict = r.category.empty() ? r.state : r.category;
        e.predictedSpeedup = r.predictedSpeedup;
        e.speedup = r.speedup;
        if (const auto reason = decisionReasons.find(r.index); reason != decisionReasons.end())
            e.measured = reason->second;
        e.hypothesis = r.hypothesis.substr(0, r.hypothesis.find('\n'));
        log.push_back(std::move(e));
    }
    return log;
}

} // namespace kl::report
