#include "core/llm/proposal_prompt.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace kl {

namespace {

bool startsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

std::string formatted(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

std::string wholeNumber(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.0f", value);
    return text;
}

std::string tunablesText(const TunableValues& values)
{
    std::string out;
    for (const auto& [name, value] : values)
        out += (out.empty() ? "" : " ") + name + "=" + std::to_string(value);
    return out;
}

std::string clipped(const std::string& text, std::size_t limit)
{
    if (text.size() <= limit)
        return text;
    return text.substr(0, limit) + "\n[... " + std::to_string(text.size() - limit) + " more bytes]";
}

FindingFacts findingFacts(const Finding& f)
{
    FindingFacts out;
    out.id = f.id;
    switch (f.severity) {
    case Finding::Severity::Critical:
        out.severity = "high";
        break;
    case Finding::Severity::Warning:
        out.severity = "medium";
        break;
    case Finding::Severity::Info:
        out.severity = "low";
        break;
    }
    out.summary = f.title;
    for (const auto& [name, value] : f.evidence)
        out.evidence += (out.evidence.empty() ? "" : ", ") + name + " = " + formatted(value);
    for (const auto& d : f.directions)
        out.direction += (out.direction.empty() ? "" : "; ") + d;
    return out;
}

std::string correctnessOf(const ProposalContext& c)
{
    if (!c.problem)
        return {};
    const auto sizes = c.problem->mainSizes.size() + c.problem->fuzzSizes.size();
    return "verified against the reference on " + std::to_string(sizes) + " size sets";
}

} // namespace

std::string outcomeWords(const EvaluatedProposal& it)
{
    if (it.proposer == "baseline")
        return "baseline";
    if (it.category == "passed")
        return it.kept ? "faster (kept as the new best)" : "correct but not faster than the best";
    if (it.category == "rejected")
        return "rejected by the engineer";
    if (it.category == "steered")
        return "not run: the engineer steered instead";
    if (startsWith(it.category, "compile."))
        return "compile-error (" + it.category.substr(8) + ")";
    if (startsWith(it.category, "proposer."))
        return "proposer-error (" + it.category.substr(9) + ")";
    return "verify-failed (" + it.category + ")";
}

bool isFixableFailure(const EvaluatedProposal& it)
{
    // Not the candidate's fault, or nothing a fix of the source can change.
    static const std::set<std::string> notFixable { "", "passed", "rejected", "steered", "cancelled", "runner-lost",
        "bad-message", "bad-request", "no-device" };
    if (notFixable.count(it.category) || startsWith(it.category, "proposer.") || startsWith(it.category, "runner."))
        return false;
    return true; // compile.* and what the runner found wrong: wrong-result, nan-output, timeout, crash, ...
}

PromptPayload payloadFor(const ProposalContext& c, const PayloadLimits& limits)
{
    PromptPayload p;
    if (c.problem)
        p.problem = describeProblem(*c.problem);
    p.best = describeCandidate(c.best, c.bestTunables);
    p.firstKernel = c.best.source.empty();

    auto& s = p.state;
    s.iteration = c.iteration;
    s.currentMicros = c.bestMedianUs;
    s.baselineMicros = c.baselineMedianUs;
    s.speedup = c.bestSpeedup;
    s.correctness = correctnessOf(c);
    s.gigabytesPerSecond = c.bestGbps;
    s.percentOfCeiling = c.bestPctOfCopy;
    s.percentOfSol = c.bestPctOfSol;
    s.solBound = c.bestSolBound;
    if (c.bestStatic.registers > 0) {
        s.registers = c.bestStatic.registers;
        s.sharedBytes = c.bestStatic.sharedBytes;
        s.spillBytes = c.bestStatic.spillBytes;
        s.occupancy = c.bestStatic.occupancy;
        s.occupancyLimiter = c.bestStatic.limiter;
    }
    s.primaryStall = c.bestStatic.primaryStall;
    s.hotLines = c.bestStatic.hotLines;

    auto findings = c.bestFindings;
    std::stable_sort(
        findings.begin(), findings.end(), [](const Finding& a, const Finding& b) { return a.priority > b.priority; });
    for (std::size_t i = 0; i < findings.size() && i < limits.findings; ++i)
        p.findings.push_back(findingFacts(findings[i]));

    auto& h = p.hardware;
    h.device = c.hardware.name;
    h.arch = c.hardware.arch;
    h.smCount = c.hardware.smCount;
    h.l2Bytes = c.hardware.l2Bytes;
    h.sharedPerSmBytes = c.hardware.sharedPerSm;
    h.sharedPerBlockOptInBytes = c.hardware.sharedPerBlockOptIn;
    h.registersPerSm = c.hardware.registersPerSm;
    h.maxWarpsPerSm = c.hardware.maxWarpsPerSm;
    if (c.hardware.copyGbps > 0)
        h.dramGigabytesPerSecond = c.hardware.copyGbps;
    if (c.hardware.smClockMhz > 0)
        h.smClockMhz = c.hardware.smClockMhz;
    if (!c.hardware.precision.empty() && c.hardware.peakTflops > 0) {
        std::string ceiling = c.hardware.precision + " ceiling (the problem's FLOPs"
            + (c.hardware.precisionWhy.empty() ? std::string() : ": " + c.hardware.precisionWhy)
            + "): " + wholeNumber(c.hardware.peakTflops) + " TFLOP/s at the SM clock (theoretical)";
        if (c.hardware.measuredTensorTflops > 0)
            ceiling += "; an mma.sync fp16 microbenchmark reached " + wholeNumber(c.hardware.measuredTensorTflops)
                + " TFLOP/s";
        h.computeCeilings.push_back(ceiling);
        if (c.hardware.fp32Tflops > 0 && c.hardware.precision != "FP32 CUDA cores")
            h.computeCeilings.push_back(
                "FP32 CUDA-core ceiling: " + wholeNumber(c.hardware.fp32Tflops) + " TFLOP/s (without tensor cores)");
    }

    const auto first = c.history.size() > limits.recentIterations ? c.history.size() - limits.recentIterations : 0;
    for (std::size_t i = first; i < c.history.size(); ++i) {
        const auto& it = c.history[i];
        IterationFacts f;
        f.iteration = it.iteration;
        f.proposer = it.proposer;
        f.outcome = outcomeWords(it);
        f.hypothesis = it.hypothesis;
        f.micros = it.medianUs;
        f.speedup = it.speedup;
        f.change = tunablesText(it.tunables);
        if (!it.sourceHash.empty() && it.sourceHash != c.bestSourceHash)
            f.change += std::string(f.change.empty() ? "" : ", ") + "source " + it.sourceHash.substr(0, 12);
        if (it.category != "passed")
            f.report = clipped(it.detail, limits.reportBytes);
        p.recent.push_back(std::move(f));
    }
    for (const auto& it : c.history)
        if (!it.rejection.empty())
            p.rejections.push_back("iteration " + std::to_string(it.iteration) + ": " + it.rejection);
    for (const auto& note : c.steering)
        p.steering += (p.steering.empty() ? "" : "\n") + note;
    for (std::size_t i = 0; i < c.examples.size() && i < limits.examples; ++i)
        p.examples.push_back({ c.examples[i].problem, c.examples[i].summary, c.examples[i].source });
    return p;
}

} // namespace kl
